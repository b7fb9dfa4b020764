// The CRD's `spec.conversion` for a kind whose versions convert through a webhook: what
// kubebuilder's crd/patches/webhook_in_<plural>.yaml sets, pointing at the operator's
// webhook Service. The CA comes separately (cert-manager's inject-ca-from, or a caBundle
// patched in at start-up).
import type { CustomResourceConversion, GeneratedCustomResourceDefinition } from '../crd/crd-generator.js';

/**
 * controller-runtime's conversion path; the webhook server serves every kind's conversions
 * there (webhooks/CONVERSION_PATH, which this layer may not import: a test keeps them equal).
 */
export const CONVERSION_WEBHOOK_PATH = '/convert';

/** The Service in front of the operator's webhook port (as kubebuilder's webhook-service, 443 -> 9443). */
export interface WebhookServiceReference {
  name: string;
  namespace: string;
  /** Default 443. */
  port?: number;
}

/** `conversion: Webhook` through the Service at `/convert`, with ConversionReview v1. */
export function webhookConversion(service: WebhookServiceReference): CustomResourceConversion {
  return {
    strategy: 'Webhook',
    webhook: {
      conversionReviewVersions: ['v1'],
      clientConfig: {
        service: {
          name: service.name,
          namespace: service.namespace,
          path: CONVERSION_WEBHOOK_PATH,
          port: service.port ?? 443,
        },
      },
    },
  };
}

/**
 * The CRDs, those named in `converted` (`<plural>.<group>`) given `conversion: Webhook`
 * through `service`; the others as they were (`None`). New objects; the inputs are unchanged.
 */
export function withWebhookConversion(
  crds: readonly GeneratedCustomResourceDefinition[],
  converted: Iterable<string>,
  service: WebhookServiceReference,
): GeneratedCustomResourceDefinition[] {
  const names = new Set(converted);
  const known = new Set(crds.map((crd) => crd.metadata.name));
  for (const name of names) {
    if (!known.has(name)) throw new Error(`a converter is declared for ${name}, but no CRD of that name is written`);
  }
  return crds.map((crd) =>
    names.has(crd.metadata.name) ? { ...crd, spec: { ...crd.spec, conversion: webhookConversion(service) } } : crd,
  );
}

/** Whether the CRD's versions convert through a webhook (it then needs the webhook's CA). */
export function hasWebhookConversion(crd: GeneratedCustomResourceDefinition): boolean {
  return crd.spec.conversion?.strategy === 'Webhook';
}
