// Where the webhook server's certificate comes from: files (cert-manager's mounted Secret,
// the default) or the operator itself (self-managed: a Secret it keeps, caBundles it patches).
import { DEFAULT_WEBHOOK_CERT_DIR, retryWhileUnreachable, silentLogger, type RuntimeLogger } from '@nestor/core';
import type { ApiTransport, CaBundleTarget } from '../webhooks/ca-bundle-injection.js';
import { SelfManagedCertificates } from '../webhooks/self-managed-certificates.js';
import { ServingCertificate, type KeyPair } from './serving-certificate.js';
import type { WebhookServingOptions } from './serving-options.js';

export { DEFAULT_WEBHOOK_CERT_DIR };
/** kubebuilder's names: the Secret cert-manager writes, and the Service in front of the webhook port. */
export const DEFAULT_WEBHOOK_SECRET = 'webhook-server-cert';
export const DEFAULT_WEBHOOK_SERVICE = 'webhook-service';
/** webhookConfigurationsOf's default name. */
export const DEFAULT_WEBHOOK_CONFIGURATION = 'nestor-webhooks';

/** The serving certificate, kept current; `problem` is why the server is not ready yet. */
export interface WebhookCertificate {
  readonly current: KeyPair;
  /** For the start-up log line. */
  readonly source: string;
  watch(onChange: (pair: KeyPair) => void): void;
  stop(): void;
  problem(): string | undefined;
}

export interface ServedWebhooks {
  validating: boolean;
  mutating: boolean;
  /** CRDs (`<plural>.<group>`) of the kinds it converts. */
  conversions: string[];
}

/** What the self-managed mode needs beyond the options, and where the certificate's logs go. */
export interface WebhookCertificateContext {
  /** The API server, for the self-managed Secret and caBundles. */
  transport?: ApiTransport;
  /** The Secret's namespace when `selfManaged.namespace` names none: the one the operator runs in. */
  namespace: () => string;
  logger?: RuntimeLogger;
}

/** The certificate as the options say; self-managed reads or creates its Secret first (bounded wait for the API server). */
export async function webhookCertificate(
  options: WebhookServingOptions,
  served: ServedWebhooks,
  context: WebhookCertificateContext,
): Promise<WebhookCertificate> {
  const log = context.logger ?? silentLogger;
  if (options.certificates !== 'self-managed') return filesCertificate(options, log);
  const { transport } = context;
  if (!transport) {
    throw new Error(
      'webhooks.certificates is self-managed but the webhook server has no transport: give it the operator’s Transport',
    );
  }
  const selfManaged = options.selfManaged ?? {};
  const namespace = selfManaged.namespace ?? context.namespace();
  const service = selfManaged.serviceName ?? DEFAULT_WEBHOOK_SERVICE;
  const secretName = selfManaged.secretName ?? DEFAULT_WEBHOOK_SECRET;
  const configuration = selfManaged.configurationName ?? DEFAULT_WEBHOOK_CONFIGURATION;
  const targets: CaBundleTarget[] = [
    ...(served.validating ? [{ kind: 'ValidatingWebhookConfiguration' as const, name: configuration }] : []),
    ...(served.mutating ? [{ kind: 'MutatingWebhookConfiguration' as const, name: configuration }] : []),
    ...[...new Set([...served.conversions, ...(selfManaged.conversionCustomResourceDefinitions ?? [])])].map(
      (name) => ({ kind: 'CustomResourceDefinition' as const, name }),
    ),
  ];
  const certificates = new SelfManagedCertificates({
    transport,
    namespace,
    secretName,
    hosts: [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`, ...(selfManaged.hosts ?? [])],
    targets,
    logger: log,
    ...(selfManaged.validityMs ? { validityMs: selfManaged.validityMs } : {}),
    ...(selfManaged.renewBeforeMs ? { renewBeforeMs: selfManaged.renewBeforeMs } : {}),
    ...(selfManaged.caValidityMs ? { caValidityMs: selfManaged.caValidityMs } : {}),
    ...(selfManaged.checkIntervalMs ? { checkIntervalMs: selfManaged.checkIntervalMs } : {}),
  });
  await retryWhileUnreachable(() => certificates.obtain(), {
    timeoutMs: 60_000,
    what: `reading the webhook certificate from Secret ${namespace}/${secretName}`,
    logger: log,
  });
  return {
    get current() {
      return certificates.current;
    },
    source: `a certificate it keeps in Secret ${namespace}/${secretName} (self-managed)`,
    watch(onChange) {
      // The first patch now, so a replica is usually ready as soon as it listens; failures are retried by watch().
      void certificates
        .inject()
        .catch((error: unknown) => log.warn(`webhook certificate: ${(error as Error).message}; trying again`))
        .finally(() => certificates.watch(onChange));
    },
    stop: () => certificates.stop(),
    problem: () => certificates.detail,
  };
}

function filesCertificate(options: WebhookServingOptions, logger: RuntimeLogger): WebhookCertificate {
  const certificate = new ServingCertificate({
    certDir: options.certDir ?? DEFAULT_WEBHOOK_CERT_DIR,
    ...(options.certName ? { certName: options.certName } : {}),
    ...(options.keyName ? { keyName: options.keyName } : {}),
    setting: 'webhooks.certDir',
    selfSignedFallback: false,
    logger,
  });
  return {
    get current() {
      return certificate.current;
    },
    source: certificate.source,
    watch: (onChange) => certificate.watch(onChange),
    stop: () => certificate.stop(),
    problem: () => undefined,
  };
}
