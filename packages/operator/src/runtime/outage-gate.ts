import { type KubeApiError, type RuntimeLogger, type Transport } from '@nestor/core';
import type { WorkerPool } from './worker-pool.js';

export interface OutageGateOptions {
  transport: Pick<Transport, 'connectivity' | 'request'>;
  pool: Pick<WorkerPool, 'pause' | 'resume'>;
  logger: RuntimeLogger;
  /** Pause between probes of /readyz while the API server is unreachable (default 1 s). */
  probeIntervalMs?: number;
}

/**
 * What the gate probes: the API server's readiness without its etcd checks. The gate is
 * about whether the API server answers. A slow etcd fails /readyz's etcd checks (their
 * deadline is 2 s) while requests still complete, slowly or with the server's own 504:
 * holding dispatch on them would stop all work for as long as etcd is slow.
 */
export const OUTAGE_PROBE_PATH = '/readyz?exclude=etcd&exclude=etcd-readiness';

/**
 * Holds reconciles while the API server is unreachable. A reconcile that fails only
 * because no response came is not the object's fault: rather than spend its backoff and
 * the shared rate limit (which, after an outage, let 2,000 objects back at 10 per second),
 * the pool stops dispatching when the transport sees no response, /readyz is probed every
 * second, and dispatch resumes when it answers 200 (its etcd checks left out: a slow etcd
 * is not an unreachable server): recovery takes as long as the work.
 * One log line when the outage starts, one when it ends.
 */
export class OutageGate {
  private readonly probeIntervalMs: number;
  private holding = false;
  private since = 0;
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private stopped = false;

  constructor(private readonly options: OutageGateOptions) {
    this.probeIntervalMs = options.probeIntervalMs ?? 1000;
  }

  start(): void {
    this.unsubscribe ??= this.options.transport.connectivity.onChange((up, error) => {
      if (!up) this.hold(error);
    });
    if (!this.options.transport.connectivity.isUp) this.hold(this.options.transport.connectivity.lastError);
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    if (this.holding) {
      this.holding = false;
      this.options.pool.resume();
    }
  }

  private hold(error: KubeApiError | undefined): void {
    if (this.holding || this.stopped) return;
    this.holding = true;
    this.since = Date.now();
    this.options.pool.pause();
    this.options.logger.warn(
      `the API server does not answer (${error?.message ?? 'no response'}); holding reconciles until it does`,
    );
    this.probe();
  }

  /** Asks /readyz; an answer of 200 ends the hold. The timer is not unref'd: an outage must not end the process. */
  private probe(): void {
    if (this.stopped) return;
    this.options.transport.request('GET', OUTAGE_PROBE_PATH, { timeoutMs: 5_000 }).then(
      (response) => (response.status === 200 ? this.release() : this.next()),
      () => this.next(),
    );
  }

  private next(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.probe(), this.probeIntervalMs);
  }

  private release(): void {
    if (!this.holding || this.stopped) return;
    this.holding = false;
    this.options.pool.resume();
    this.options.logger.info(
      `the API server answers again after ${((Date.now() - this.since) / 1000).toFixed(1)} s; reconciles resume`,
    );
  }
}
