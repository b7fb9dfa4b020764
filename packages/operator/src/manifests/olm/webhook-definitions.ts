// A CSV's `webhookdefinitions`: under OLM the operator ships no webhook configurations, no
// Service and no certificate. OLM makes them from these entries, with a Service in front of
// the Deployment named here and a certificate it mounts where controller-runtime reads it,
// and points the converted CRDs at the same server.
import type { GeneratedCustomResourceDefinition } from '../../crd/crd-generator.js';
import { CONVERSION_WEBHOOK_PATH, hasWebhookConversion } from '../crd-conversion.js';
import type { Manifest } from '../manifest.js';

/** `spec.webhookdefinitions[]` of a CSV (operators.coreos.com/v1alpha1 WebhookDescription). */
export interface OlmWebhookDefinition {
  type: 'ValidatingAdmissionWebhook' | 'MutatingAdmissionWebhook' | 'ConversionWebhook';
  generateName: string;
  deploymentName: string;
  /** The port of the Service OLM puts in front of the Deployment. */
  containerPort: number;
  /** The container's port behind it. */
  targetPort: number;
  webhookPath: string;
  admissionReviewVersions: string[];
  sideEffects: string;
  rules?: unknown[];
  failurePolicy?: string;
  matchPolicy?: string;
  objectSelector?: unknown;
  timeoutSeconds?: number;
  reinvocationPolicy?: string;
  conversionCRDs?: string[];
}

interface WebhookEntry {
  name: string;
  admissionReviewVersions: string[];
  clientConfig: { service?: { path?: string } };
  sideEffects: string;
  namespaceSelector?: unknown;
  matchConditions?: unknown[];
  [field: string]: unknown;
}

/**
 * The webhook definitions of the module's Validating and MutatingWebhookConfigurations and
 * of its converted CRDs. OLM sets each webhook's namespaceSelector from the OperatorGroup,
 * and a CSV has no field for matchConditions: a webhook with either is refused.
 */
export function webhookDefinitions(
  operator: { name: string; webhookPort: number },
  configurations: readonly Manifest[],
  crds: readonly GeneratedCustomResourceDefinition[],
): OlmWebhookDefinition[] {
  const common = { deploymentName: operator.name, containerPort: 443, targetPort: operator.webhookPort };
  const definitions: OlmWebhookDefinition[] = configurations.flatMap((configuration) =>
    ((configuration as Manifest & { webhooks: WebhookEntry[] }).webhooks ?? []).map((webhook) => {
      for (const field of ['namespaceSelector', 'matchConditions'] as const) {
        if (webhook[field] !== undefined)
          throw new Error(
            `the webhook ${webhook.name} has a ${field}, which a CSV cannot carry (OLM sets the namespaceSelector ` +
              `from the OperatorGroup): leave ${field} out of its @Webhook() for the OLM bundle`,
          );
      }
      const { name, clientConfig, admissionReviewVersions, sideEffects, ...rest } = webhook;
      return {
        type:
          configuration.kind === 'MutatingWebhookConfiguration'
            ? 'MutatingAdmissionWebhook'
            : 'ValidatingAdmissionWebhook',
        generateName: name,
        ...common,
        webhookPath: clientConfig.service?.path ?? '/',
        admissionReviewVersions,
        sideEffects,
        ...pick(rest, [
          'rules',
          'failurePolicy',
          'matchPolicy',
          'objectSelector',
          'timeoutSeconds',
          'reinvocationPolicy',
        ]),
      };
    }),
  );
  const converted = crds.filter(hasWebhookConversion).map((crd) => crd.metadata.name);
  if (converted.length)
    definitions.push({
      type: 'ConversionWebhook',
      generateName: `conversion.${operator.name}.nestor.dev`,
      ...common,
      webhookPath: CONVERSION_WEBHOOK_PATH,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      conversionCRDs: converted.sort(),
    });
  return definitions;
}

function pick(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => object[key] !== undefined).map((key) => [key, object[key]]));
}
