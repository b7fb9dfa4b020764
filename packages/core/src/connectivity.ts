import type { KubeApiError } from './errors.js';

export type ConnectivityListener = (up: boolean, error?: KubeApiError) => void;

/**
 * Whether the API server answers, as the transport sees it: down when a request gets no
 * response at all (refused, reset, unreachable, timed out), up again when one does. The
 * runtime holds reconciles while it is down, so an outage costs no per-object backoff.
 */
export class Connectivity {
  private up = true;
  /** From a failure until the next ready(): the server may answer before it serves (403, 503 while it starts). */
  private outage = false;
  private cause?: KubeApiError;
  private readonly listeners = new Set<ConnectivityListener>();
  private readonly readyWaiters = new Set<() => void>();
  private lastAnswerAt = -Infinity;

  get isUp(): boolean {
    return this.up;
  }

  /** The failure that took it down, while down. */
  get lastError(): KubeApiError | undefined {
    return this.up ? undefined : this.cause;
  }

  /** A response arrived (any status). */
  answered(): void {
    this.lastAnswerAt = performance.now();
    if (this.up) return;
    this.up = true;
    this.cause = undefined;
    for (const listener of this.listeners) listener(true);
  }

  /**
   * Whether a response arrived after `since` (`performance.now()`): a request sent then that
   * ran into its deadline met a slow server (a slow etcd, a slow admission webhook), not a
   * gone one.
   */
  answeredSince(since: number): boolean {
    return this.lastAnswerAt > since;
  }

  /**
   * True from a request that got no response until the outage gate next found the server
   * ready: what the server answers meanwhile (403 before its authorizer has synced, 503, 429
   * while it starts) is the outage's, not the request's. (Without a gate, nothing ends it.)
   */
  get inOutage(): boolean {
    return this.outage;
  }

  /** The server answered but says it is not ready (its /readyz): an outage until ready(). */
  notReady(): void {
    this.outage = true;
  }

  /** A request got no response. */
  failed(error: KubeApiError): void {
    this.cause = error;
    this.outage = true;
    if (!this.up) return;
    this.up = false;
    for (const listener of this.listeners) listener(false, error);
  }

  /**
   * The API server answered a readiness probe (the outage gate's GET /readyz, 200): it
   * serves again. Wakes every whenReady().
   */
  ready(): void {
    this.outage = false;
    this.answered();
    const waiters = [...this.readyWaiters];
    this.readyWaiters.clear();
    for (const wake of waiters) wake();
  }

  /**
   * Resolves at the next ready() (or when `signal` aborts). A step that failed for want of
   * a response races it with its own backoff: it retries as soon as the server is back,
   * not when a doubling delay ends, and still after that delay where nothing probes.
   */
  whenReady(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const wake = () => {
        this.readyWaiters.delete(wake);
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      this.readyWaiters.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }

  /** Tells `listener` of every change; returns the unsubscribe. */
  onChange(listener: ConnectivityListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** True for a failure where no response arrived: the API server (or the path to it) is down, not the request wrong. */
export function isUnreachable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.name === 'KubeApiError' && (e as KubeApiError).status === 0) return true;
  }
  return false;
}
