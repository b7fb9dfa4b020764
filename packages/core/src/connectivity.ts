import type { KubeApiError } from './errors.js';

export type ConnectivityListener = (up: boolean, error?: KubeApiError) => void;

/**
 * Whether the API server answers, as the transport sees it: down when a request gets no
 * response at all (refused, reset, unreachable, timed out), up again when one does. The
 * runtime holds reconciles while it is down, so an outage costs no per-object backoff.
 */
export class Connectivity {
  private up = true;
  private cause?: KubeApiError;
  private readonly listeners = new Set<ConnectivityListener>();

  get isUp(): boolean {
    return this.up;
  }

  /** The failure that took it down, while down. */
  get lastError(): KubeApiError | undefined {
    return this.up ? undefined : this.cause;
  }

  /** A response arrived (any status). */
  answered(): void {
    if (this.up) return;
    this.up = true;
    this.cause = undefined;
    for (const listener of this.listeners) listener(true);
  }

  /** A request got no response. */
  failed(error: KubeApiError): void {
    this.cause = error;
    if (!this.up) return;
    this.up = false;
    for (const listener of this.listeners) listener(false, error);
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
