import type { KubeConfigSource } from './cluster-config.js';
import { readCredentials, tlsChanged, type Credentials } from './kubeconfig-credentials.js';
import type { RuntimeLogger } from './logger.js';

export interface CredentialRefreshOptions {
  /** How often credentials that can expire are read again. */
  refreshMs: number;
  userAgent?: string | undefined;
  log: RuntimeLogger;
  /** Told of new TLS material (an exec plugin rotated the client certificate). */
  onTlsRotated: (credentials: Credentials) => void;
}

/**
 * The kubeconfig user's credentials as every request of a Transport presents them: the
 * headers, read again periodically when they can expire (exec plugin, OIDC, token file) and
 * once on a 401, one read for all callers waiting on it.
 */
export class CredentialRefresh {
  private current!: Credentials;
  private shared!: Record<string, string>;
  private dueAt: number;
  private refreshing?: Promise<void>;

  constructor(
    private readonly kubeConfig: KubeConfigSource,
    credentials: Credentials,
    private readonly options: CredentialRefreshOptions,
  ) {
    this.dueAt = credentials.expiring ? Date.now() + options.refreshMs : Infinity;
    this.use(credentials);
  }

  get credentials(): Credentials {
    return this.current;
  }

  /** The headers every request carries: Accept, User-Agent, and the auth's. */
  get headers(): Record<string, string> {
    return this.shared;
  }

  /** True once credentials that can expire are due to be read again. */
  get due(): boolean {
    return Date.now() >= this.dueAt;
  }

  /** Reads the auth again, once for all callers waiting on it. */
  refresh(): Promise<void> {
    this.refreshing ??= this.reload().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async reload(): Promise<void> {
    const { refreshMs } = this.options;
    try {
      const next = await readCredentials(this.kubeConfig);
      const rotated = tlsChanged(this.current.tls, next.tls);
      this.use(next);
      if (rotated) this.options.onTlsRotated(next);
      this.dueAt = Date.now() + refreshMs;
    } catch (error) {
      this.dueAt = Date.now() + Math.min(refreshMs, 10_000);
      this.options.log.warn(
        `could not refresh the kubeconfig user's credentials; using the current ones: ${(error as Error).message}`,
      );
    }
  }

  private use(credentials: Credentials): void {
    this.current = credentials;
    this.shared = {
      accept: 'application/json',
      'user-agent': this.options.userAgent ?? 'nestor',
      ...credentials.headers,
    };
  }
}
