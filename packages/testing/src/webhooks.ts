// envtest's WebhookInstallOptions: webhook configurations pointed at a server on this
// machine, with a CA the API server trusts and a serving certificate it signed.
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { certificateAuthority, KubeApiError, selfSignedCertificate, type CertificateAuthority } from '@nestor/core';
import type { ApiClient } from './api-client.js';
import { freePort } from './ports.js';
import { waitFor } from './wait-for.js';

/** A Validating or MutatingWebhookConfiguration, as `webhookConfigurationsOf` writes one. */
export interface WebhookConfigurationObject {
  apiVersion?: string;
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration';
  metadata: { name: string; [key: string]: unknown };
  webhooks?: Record<string, unknown>[];
}

export interface WebhookInstallOptions {
  /** The configurations: each webhook's `service` (or `url`) is replaced by https://host:port/<its path>. */
  configurations?: WebhookConfigurationObject[];
  /**
   * Installed CRDs (their names, `<plural>.<group>`, or the CRD objects) whose conversion goes
   * to https://host:port/convert, as envtest does for convertible kinds. Set back to `None`
   * on uninstall.
   */
  conversions?: Array<string | { metadata: { name: string } }>;
  /** Default 127.0.0.1 (Go sends no SNI to an IP, and the certificate names it). */
  host?: string;
  /** Default a free port. */
  port?: number;
}

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const PATHS: Record<WebhookConfigurationObject['kind'], string> = {
  ValidatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  MutatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
};

/**
 * Installed webhook configurations and the certificate the local server must serve: start
 * the app with `webhooks: { host, port, certDir }`. The API server trusts the CA, so
 * `rotateServingCertificate()` can write a new leaf while it serves.
 */
export class LocalWebhooks {
  private removed = false;

  private constructor(
    private readonly client: ApiClient,
    private readonly ca: CertificateAuthority,
    /** Where the server listens. */
    readonly host: string,
    readonly port: number,
    /** tls.crt and tls.key of a serving certificate for host, signed by the CA. */
    readonly certDir: string,
    /** The installed configurations, as sent. */
    readonly configurations: WebhookConfigurationObject[],
    /** The CRDs whose conversion points here. */
    readonly conversions: string[],
  ) {}

  static async install(client: ApiClient, options: WebhookInstallOptions): Promise<LocalWebhooks> {
    const host = options.host ?? '127.0.0.1';
    const port = options.port ?? (await freePort());
    const ca = certificateAuthority({ commonName: 'nestor-testing-webhook-ca' });
    const certDir = await mkdtemp(join(tmpdir(), 'nestor-webhook-certs-'));
    const caBundle = Buffer.from(ca.cert).toString('base64');
    const configurations = (options.configurations ?? []).map((configuration) => ({
      ...configuration,
      apiVersion: 'admissionregistration.k8s.io/v1',
      webhooks: (configuration.webhooks ?? []).map((webhook) => {
        const path = webhookPathOf(webhook.clientConfig as ClientConfig | undefined);
        return { ...webhook, clientConfig: { url: `https://${host}:${port}${path}`, caBundle } };
      }),
    }));
    const conversions = (options.conversions ?? []).map((crd) => (typeof crd === 'string' ? crd : crd.metadata.name));
    const webhooks = new LocalWebhooks(client, ca, host, port, certDir, configurations, conversions);
    await webhooks.rotateServingCertificate();
    try {
      for (const configuration of configurations) {
        await client.request('POST', PATHS[configuration.kind], configuration);
      }
      const conversion = {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: { url: `https://${host}:${port}/convert`, caBundle, service: null },
        },
      };
      for (const name of conversions) {
        await client.request('PATCH', `${CRDS}/${name}`, { spec: { conversion } }, 'application/merge-patch+json');
      }
    } catch (error) {
      await webhooks.uninstall();
      throw error;
    }
    return webhooks;
  }

  /** The CA's PEM: what the configurations' caBundle holds. */
  get caCertificate(): string {
    return this.ca.cert;
  }

  /**
   * Writes a new serving certificate and key, signed by the same CA, as cert-manager renews
   * one: each file replaced whole (written beside it, then renamed), the certificate first.
   */
  async rotateServingCertificate(): Promise<void> {
    const { cert, key } = selfSignedCertificate({ hosts: [this.host], issuer: this.ca });
    for (const [name, content] of [
      ['tls.crt', cert],
      ['tls.key', key],
    ] as const) {
      const path = join(this.certDir, name);
      await writeFile(`${path}.new`, content, { mode: 0o600 });
      await rename(`${path}.new`, path);
    }
  }

  /**
   * Resolves once something accepts TCP connections on `host:port`: the app's webhook
   * server is listening (rejects after `timeoutMs`, default 30 s). It does not mean the API
   * server calls it yet: the API server loads webhook configurations through an informer, a
   * moment after they are created. Before asserting on admission, wait for a request to
   * reach the webhook, e.g. a dry-run create that it denies:
   *
   * ```ts
   * await webhooks.waitUntilServing();
   * await waitFor(async () => (await env.client.raw('POST', `${path}?dryRun=All`, tooBig)).status === 422, {
   *   what: 'the API server to call the webhook',
   * });
   * ```
   */
  async waitUntilServing(timeoutMs = 30_000): Promise<void> {
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          const socket = connect(this.port, this.host, () => {
            socket.destroy();
            resolve(true);
          });
          socket.on('error', () => resolve(false));
        }),
      { timeoutMs, what: `a webhook server on ${this.host}:${this.port}` },
    );
  }

  /** Deletes the configurations, sets the CRDs' conversion back to None, removes the certificate files. */
  async uninstall(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    for (const name of this.conversions) {
      await this.client
        .request(
          'PATCH',
          `${CRDS}/${name}`,
          { spec: { conversion: { strategy: 'None', webhook: null } } },
          'application/merge-patch+json',
        )
        .catch((error: unknown) => {
          if (!(error instanceof KubeApiError && error.status === 404)) throw error;
        });
    }
    for (const configuration of this.configurations) {
      await this.client
        .request('DELETE', `${PATHS[configuration.kind]}/${configuration.metadata.name}`)
        .catch((error: unknown) => {
          if (!(error instanceof KubeApiError && error.status === 404)) throw error;
        });
    }
    await rm(this.certDir, { recursive: true, force: true });
  }
}

interface ClientConfig {
  url?: string;
  service?: { path?: string };
}

function webhookPathOf(clientConfig: ClientConfig | undefined): string {
  if (clientConfig?.service) return clientConfig.service.path ?? '/';
  if (clientConfig?.url) return new URL(clientConfig.url).pathname;
  throw new Error(
    'a webhook has no clientConfig.service or clientConfig.url: there is no path to point at the local server',
  );
}
