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

/**
 * `conversion: Webhook` at `/convert`, with ConversionReview v1: through the operator's
 * Service, or, for an operator run on this machine (a local control plane, kubectl), through
 * `{ url: 'https://127.0.0.1:9443' }` (the base URL, `/convert` appended; HTTPS only) with
 * the CA that signed its serving certificate as `caBundle` (PEM, or base64 of it, as the
 * CRD holds it; without one, the self-managed certificates patch it in).
 */
export function webhookConversion(
  target: WebhookServiceReference | { url: string; caBundle?: string },
): CustomResourceConversion {
  if ('url' in target) {
    const caBundle = target.caBundle === undefined ? undefined : base64Pem(target.caBundle);
    return {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: {
          url: `${conversionBaseUrl(target.url)}${CONVERSION_WEBHOOK_PATH}`,
          ...(caBundle ? { caBundle } : {}),
        },
      },
    };
  }
  return {
    strategy: 'Webhook',
    webhook: {
      conversionReviewVersions: ['v1'],
      clientConfig: {
        service: {
          name: target.name,
          namespace: target.namespace,
          path: CONVERSION_WEBHOOK_PATH,
          port: target.port ?? 443,
        },
      },
    },
  };
}

/** The base URL without a trailing slash; refused unless HTTPS without query or fragment, as the API server does. */
function conversionBaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`webhookConversion: url ${JSON.stringify(url)} is not a URL: give https://<host>:<port>`);
  }
  if (parsed.protocol !== 'https:' || parsed.search || parsed.hash || parsed.username || parsed.password) {
    throw new Error(
      `webhookConversion: url ${JSON.stringify(url)} must be https://<host>:<port>, without a query, fragment or user (the API server calls conversion webhooks over TLS only)`,
    );
  }
  return url.replace(/\/+$/, '');
}

/** A caBundle as a CRD holds it: base64 of the PEM. */
function base64Pem(caBundle: string): string {
  if (caBundle.includes('-----BEGIN')) return Buffer.from(caBundle).toString('base64');
  if (!Buffer.from(caBundle, 'base64').toString('latin1').includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error('webhookConversion: caBundle is neither a PEM certificate nor base64 of one: give the CA’s PEM');
  }
  return caBundle;
}

/**
 * The CRDs, those named in `converted` (`<plural>.<group>`) given `conversion: Webhook`
 * through `service` (or a `{ url, caBundle }`, as webhookConversion); the others as they
 * were (`None`). New objects; the inputs are unchanged.
 */
export function withWebhookConversion(
  crds: readonly GeneratedCustomResourceDefinition[],
  converted: Iterable<string>,
  service: WebhookServiceReference | { url: string; caBundle?: string },
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
