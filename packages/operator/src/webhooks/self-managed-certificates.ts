// Webhook certificates without cert-manager (kopf's managed mode; open-policy-agent's
// cert-controller in Go): the operator keeps a CA and a serving certificate in a Secret of
// its namespace, made by whichever replica starts first, renewed before they expire, and
// patches the CA into its webhook configurations and CRD conversions.
//
// Several replicas share one Secret without a leader: creating it is create-or-read (the
// loser of a 409 reads the winner's), renewing it is an update on the resourceVersion read
// (the loser of a 409 reads again and finds nothing left to do). So there is one CA, every
// replica computes the same caBundle from it, and patches only what differs: no flapping.
import {
  KubeApiError,
  refreshCertificate,
  silentLogger,
  systemClock,
  type Clock,
  type KeyPair,
  type RuntimeLogger,
} from '@nestor/core';
import { injectCaBundle, type ApiTransport, type CaBundleTarget } from './ca-bundle-injection.js';
import {
  CERTIFICATE_SECRET_KEYS,
  renewalDue,
  renewedCertificateSecret,
  type CertificateSecretData,
  type RenewalPolicy,
} from './certificate-secret.js';

export interface SelfManagedCertificatesOptions extends RenewalPolicy {
  transport: ApiTransport;
  /** Where the Secret lives: the operator's namespace. */
  namespace: string;
  secretName: string;
  /** The configurations and CRDs whose caBundle is kept equal to the Secret's ca.crt. */
  targets: readonly CaBundleTarget[];
  /** How often the Secret is read again and the caBundles checked (default 5 minutes). */
  checkIntervalMs?: number;
  /** First wait after a failure, doubled up to checkIntervalMs (default 2 s). */
  retryMs?: number;
  clock?: Clock;
  logger?: RuntimeLogger;
}

/** @deprecated Use `KeyPair`, the one type of a PEM certificate and its key; this name goes in the next release. */
export type ServingPair = KeyPair;

interface SecretObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

const DEFAULT_CHECK_INTERVAL_MS = 5 * 60_000;
const ATTEMPTS = 5;

export class SelfManagedCertificates {
  private data?: CertificateSecretData;
  /** The caBundle every target was last seen to hold. */
  private injected?: string;
  private problem?: string;
  private refresh?: { stop(): void };
  private stopped = false;
  private readonly clock: Clock;
  private readonly log: RuntimeLogger;

  constructor(private readonly options: SelfManagedCertificatesOptions) {
    this.clock = options.clock ?? systemClock;
    this.log = options.logger ?? silentLogger;
  }

  /** The serving certificate and key, once obtain() has run. */
  get current(): KeyPair {
    if (!this.data) throw new Error('SelfManagedCertificates: obtain() first');
    return { cert: this.data['tls.crt'], key: this.data['tls.key'] };
  }

  /** Base64 of the CA bundle: what each caBundle must hold. */
  get caBundle(): string {
    if (!this.data) throw new Error('SelfManagedCertificates: obtain() first');
    return Buffer.from(this.data['ca.crt']).toString('base64');
  }

  /** True once every target holds the current caBundle (readiness). */
  get ready(): boolean {
    return this.data !== undefined && this.injected === this.caBundle;
  }

  /** Why it is not ready, for /readyz. */
  get detail(): string | undefined {
    if (this.ready) return undefined;
    const waiting = `waiting to put the webhook CA into ${this.options.targets.map((t) => `${t.kind} ${t.name}`).join(', ')}`;
    return this.problem ? `${waiting}: ${this.problem}` : waiting;
  }

  /**
   * Reads the Secret, creating it when absent and renewing what is due: the serving pair.
   * Throws what the API server refused (with the RBAC to grant on a 403).
   */
  async obtain(): Promise<KeyPair> {
    for (let attempt = 1; ; attempt++) {
      const secret = await this.readSecret();
      const current = secret ? decode(secret.data) : undefined;
      const renewal = renewedCertificateSecret(current, this.options, new Date(this.clock.now()));
      if (!renewal) {
        this.data = current as CertificateSecretData;
        return this.current;
      }
      try {
        // Keys it does not know of are kept.
        if (secret) await this.writeSecret('PUT', { ...secret, data: { ...secret.data, ...encode(renewal.data) } });
        else await this.writeSecret('POST', this.newSecret(renewal.data));
        this.log.info(
          `${secret ? 'renewed' : 'created'} the webhook certificate in Secret ${this.options.namespace}/${this.options.secretName}: ${renewal.reason}`,
        );
        this.data = renewal.data;
        return this.current;
      } catch (error) {
        // Another replica created or renewed it first: use theirs.
        if (error instanceof KubeApiError && error.status === 409 && attempt < ATTEMPTS) continue;
        throw this.explain(error);
      }
    }
  }

  /** Puts the caBundle into every target that lacks it. Throws the first failure, after trying them all. */
  async inject(): Promise<void> {
    const caBundle = this.caBundle;
    let failure: unknown;
    for (const target of this.options.targets) {
      try {
        const result = await injectCaBundle(this.options.transport, target, caBundle);
        if (result === 'patched')
          this.log.info(`put the webhook CA into the caBundle of ${target.kind} ${target.name}`);
        if (result === 'not-webhook-conversion')
          this.log.debug(`${target.kind} ${target.name} converts without a webhook: no caBundle to set`);
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure) {
      this.problem = (failure as Error).message;
      throw failure;
    }
    this.problem = undefined;
    this.injected = caBundle;
  }

  /**
   * Checks again every checkIntervalMs (sooner after a failure, and when a renewal is due):
   * a new Secret content is patched into the caBundles first, then handed to `onChange`, so
   * the API server trusts a new CA before any replica serves a certificate it signed.
   */
  watch(onChange: (pair: KeyPair) => void): void {
    if (this.stopped) return;
    const interval = this.options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS;
    let retryMs = this.options.retryMs ?? 2000;
    this.refresh = refreshCertificate({
      clock: this.clock,
      logger: this.log,
      firstMs: this.ready ? interval : retryMs,
      check: async () => {
        const before = this.data;
        await this.obtain();
        await this.inject();
        if (this.data !== before && this.data?.['tls.crt'] !== before?.['tls.crt']) onChange(this.current);
        retryMs = this.options.retryMs ?? 2000;
        const due = renewalDue(this.data!, this.options);
        return Math.max(0, Math.min(interval, (due?.getTime() ?? Infinity) - this.clock.now()));
      },
      failed: (problem) => {
        this.problem = problem;
        const wait = retryMs;
        retryMs = Math.min(retryMs * 2, interval);
        return wait;
      },
      warning: (problem) => `webhook certificate: ${problem}; trying again`,
    });
  }

  stop(): void {
    this.stopped = true;
    this.refresh?.stop();
    this.refresh = undefined;
  }

  private get secretPath(): string {
    return `/api/v1/namespaces/${this.options.namespace}/secrets`;
  }

  private async readSecret(): Promise<SecretObject | undefined> {
    try {
      return await this.options.transport.json<SecretObject>('GET', `${this.secretPath}/${this.options.secretName}`);
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) return undefined;
      throw this.explain(error);
    }
  }

  private async writeSecret(method: 'POST' | 'PUT', secret: SecretObject): Promise<void> {
    const path = method === 'POST' ? this.secretPath : `${this.secretPath}/${this.options.secretName}`;
    await this.options.transport.json(method, path, { body: secret });
  }

  private newSecret(data: CertificateSecretData): SecretObject {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: this.options.secretName,
        namespace: this.options.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'nestor', 'app.kubernetes.io/component': 'webhook-certificate' },
      },
      type: 'kubernetes.io/tls',
      data: encode(data),
    };
  }

  private explain(error: unknown): unknown {
    if (error instanceof KubeApiError && error.status === 403) {
      const { namespace, secretName } = this.options;
      return new Error(
        `the operator may not keep its webhook certificate in Secret ${namespace}/${secretName} (${error.detail}): ` +
          `grant get and update on secrets with resourceNames [${secretName}], and create on secrets, in ${namespace} ` +
          `(nestor manifests --webhook-certificates self-managed writes that Role)`,
        { cause: error },
      );
    }
    return error;
  }
}

function decode(data: Record<string, string> | undefined): Partial<CertificateSecretData> {
  const decoded: Partial<CertificateSecretData> = {};
  for (const key of CERTIFICATE_SECRET_KEYS) {
    if (data?.[key]) decoded[key] = Buffer.from(data[key], 'base64').toString('utf8');
  }
  return decoded;
}

function encode(data: CertificateSecretData): Record<string, string> {
  return Object.fromEntries(CERTIFICATE_SECRET_KEYS.map((key) => [key, Buffer.from(data[key]).toString('base64')]));
}
