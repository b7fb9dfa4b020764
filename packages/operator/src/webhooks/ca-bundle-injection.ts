// Puts the CA the API server must trust into the operator's webhook configurations and
// into the conversion of its CRDs, as cert-manager's cainjector does, by name: a GET, then a
// JSON Patch of only the entries whose caBundle differs (none: no write), each guarded by a
// `test` of what it patches, so a concurrent edit of the list fails the patch instead of
// writing into the wrong entry.
import { KubeApiError, type RequestOptions } from '@nestor/core';

/** The part of core's Transport this uses. */
export interface ApiTransport {
  json<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
}

export type CaBundleTarget =
  | { kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration'; name: string }
  | { kind: 'CustomResourceDefinition'; name: string };

/** What happened to one target: written, already right, or not converting through a webhook (CRDs only). */
export type InjectionResult = 'patched' | 'unchanged' | 'not-webhook-conversion';

const PATHS: Record<CaBundleTarget['kind'], string> = {
  ValidatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  MutatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
  CustomResourceDefinition: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
};

interface PatchOperation {
  op: 'test' | 'add';
  path: string;
  value: unknown;
}

interface WebhookConfigurationObject {
  webhooks?: { name: string; clientConfig?: { caBundle?: string } }[];
}

interface CrdObject {
  spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } } };
}

/**
 * Makes the target's caBundle `caBundle` (base64 of the PEM bundle). A patch whose guard
 * failed (the object changed between the GET and the PATCH) is tried again on a new GET.
 */
export async function injectCaBundle(
  transport: ApiTransport,
  target: CaBundleTarget,
  caBundle: string,
): Promise<InjectionResult> {
  const path = `${PATHS[target.kind]}/${target.name}`;
  for (let attempt = 1; ; attempt++) {
    let object: WebhookConfigurationObject & CrdObject;
    try {
      object = await transport.json<WebhookConfigurationObject & CrdObject>('GET', path);
    } catch (error) {
      throw explain(error, target);
    }
    const operations =
      target.kind === 'CustomResourceDefinition' ? crdPatch(object, caBundle) : webhookPatch(object, caBundle);
    if (operations === 'not-webhook-conversion') return operations;
    if (operations.length === 0) return 'unchanged';
    try {
      await transport.json('PATCH', path, { body: operations, contentType: 'application/json-patch+json' });
      return 'patched';
    } catch (error) {
      // 422 is a failed `test`: the object changed under us.
      if (error instanceof KubeApiError && error.status === 422 && attempt < 3) continue;
      throw explain(error, target);
    }
  }
}

function webhookPatch(object: WebhookConfigurationObject, caBundle: string): PatchOperation[] {
  const operations: PatchOperation[] = [];
  (object.webhooks ?? []).forEach((webhook, i) => {
    if (webhook.clientConfig?.caBundle === caBundle) return;
    operations.push(
      { op: 'test', path: `/webhooks/${i}/name`, value: webhook.name },
      // `add` replaces a member that is there (RFC 6902 §4.1), and adds an absent one.
      { op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle },
    );
  });
  return operations;
}

function crdPatch(object: CrdObject, caBundle: string): PatchOperation[] | 'not-webhook-conversion' {
  const conversion = object.spec?.conversion;
  if (conversion?.strategy !== 'Webhook' || !conversion.webhook?.clientConfig) return 'not-webhook-conversion';
  if (conversion.webhook.clientConfig.caBundle === caBundle) return [];
  return [
    { op: 'test', path: '/spec/conversion/strategy', value: 'Webhook' },
    { op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: caBundle },
  ];
}

/** A 404 or 403 says what to apply or grant. */
function explain(error: unknown, target: CaBundleTarget): unknown {
  if (!(error instanceof KubeApiError)) return error;
  const what = `${target.kind} ${target.name}`;
  if (error.status === 404) {
    return new Error(
      target.kind === 'CustomResourceDefinition'
        ? `${what} does not exist: apply the manifests that define it (nestor manifests writes it), or name the right one in webhooks.selfManaged`
        : `${what} does not exist: apply the manifests that define it (nestor manifests writes it), or name the right one in ` +
            `webhooks.selfManaged.configurationName (WEBHOOK_CONFIGURATION_NAME): it must be the name given to webhookConfigurationsOf`,
      { cause: error },
    );
  }
  if (error.status === 403) {
    return new Error(
      `the operator may not read and patch ${what} (${error.detail}): grant get and patch on it, with resourceNames [${target.name}] ` +
        `(nestor manifests --webhook-certificates self-managed writes that rule)`,
      { cause: error },
    );
  }
  return error;
}
