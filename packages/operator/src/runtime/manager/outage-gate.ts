import type { RuntimeLogger, Transport } from '@nestor/core';
import type { WorkerPool } from '../controller/worker-pool.js';

/** Where the gate reports outages (OperatorMetrics binds this to Prometheus). */
export interface OutageMetrics {
  /** Called with true when an outage starts (reconciles held), false when it ends. */
  holding(held: boolean): void;
}

export interface OutageGateOptions {
  transport: Pick<Transport, 'connectivity' | 'request'>;
  pool: Pick<WorkerPool, 'pause' | 'resume'>;
  logger: RuntimeLogger;
  /**
   * Pause between probes of /readyz while the API server is unreachable (default: 250 ms in
   * the first 30 s of an outage, then 1 s).
   */
  probeIntervalMs?: number;
  metrics?: OutageMetrics;
}

/** The gate's state, for /readyz. */
export interface OutageState {
  /** True while reconciles are held: the API server gave no response and has not answered /readyz with 200 since. */
  holding: boolean;
  /** Date.now() when the current outage started (holding only). */
  since?: number;
  /** What the server does, for messages: 'does not answer (...)', 'is not ready (...)' (holding only). */
  error?: string;
}

/**
 * What the gate probes: the API server's readiness without its etcd checks. The gate is
 * about whether the API server answers. A slow etcd fails /readyz's etcd checks (their
 * deadline is 2 s) while requests still complete, slowly or with the server's own 504:
 * holding dispatch on them would stop all work for as long as etcd is slow.
 */
export const OUTAGE_PROBE_PATH = '/readyz?exclude=etcd&exclude=etcd-readiness';

/**
 * Probes this often early in an outage: a restarted API server is back within seconds, and
 * the gate's pause is what the operator waits after it is (at 1 s, 0.1-0.9 s of every
 * restart measured by bench/startup.mjs). A refused connection costs the server nothing,
 * and its /readyz answers from memory while it starts.
 */
export const OUTAGE_FAST_PROBE_MS = 250;
/** How long into an outage the gate probes at OUTAGE_FAST_PROBE_MS; then every second. */
export const OUTAGE_FAST_PROBE_WINDOW_MS = 30_000;

/**
 * Holds reconciles while the API server is unreachable. A reconcile that fails only
 * because no response came is not the object's fault: rather than spend its backoff and
 * the shared rate limit (which, after an outage, let 2,000 objects back at 10 per second),
 * the pool stops dispatching when the transport sees no response, /readyz is probed (every
 * 250 ms for the first 30 s, then every second), and dispatch resumes when it answers 200 (its etcd checks left out: a slow etcd
 * is not an unreachable server): recovery takes as long as the work.
 * One log line when the outage starts, one when it ends.
 */
export class OutageGate {
  private readonly probeIntervalMs?: number;
  private holding = false;
  private since = 0;
  private cause?: string;
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private stopped = false;

  constructor(private readonly options: OutageGateOptions) {
    this.probeIntervalMs = options.probeIntervalMs;
  }

  get state(): OutageState {
    return this.holding
      ? { holding: true, since: this.since, ...(this.cause ? { error: this.cause } : {}) }
      : { holding: false };
  }

  start(): void {
    this.unsubscribe ??= this.options.transport.connectivity.onChange((up, error) => {
      if (!up) this.hold(`does not answer (${error?.message ?? 'no response'})`);
    });
    const connectivity = this.options.transport.connectivity;
    if (!connectivity.isUp) this.hold(`does not answer (${connectivity.lastError?.message ?? 'no response'})`);
  }

  /**
   * Asks /readyz once, outside an outage: when the server is not ready (it restarted and
   * answers, 403 while its authorizer syncs), holds as for an outage until it is, and
   * resolves false. Start-up steps ask it after a failure with an answer.
   */
  async verify(): Promise<boolean> {
    if (this.holding || this.stopped) return !this.holding;
    const status = await this.options.transport.request('GET', '/readyz', { timeoutMs: 5_000 }).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return true;
    this.options.transport.connectivity.notReady();
    this.hold(status ? `is not ready (/readyz: ${status})` : 'does not answer');
    return false;
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    if (this.holding) {
      this.holding = false;
      this.options.pool.resume();
      this.options.metrics?.holding(false);
    }
  }

  /** `why`: what the server does ('does not answer (...)', 'is not ready (...)'). */
  private hold(why: string): void {
    if (this.holding || this.stopped) return;
    this.holding = true;
    this.since = Date.now();
    this.cause = why;
    this.options.pool.pause();
    this.options.metrics?.holding(true);
    this.options.logger.warn(`the API server ${why}; holding reconciles until it does`);
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
    const interval =
      this.probeIntervalMs ?? (Date.now() - this.since < OUTAGE_FAST_PROBE_WINDOW_MS ? OUTAGE_FAST_PROBE_MS : 1000);
    this.timer = setTimeout(() => this.probe(), interval);
  }

  private release(): void {
    if (!this.holding || this.stopped) return;
    this.holding = false;
    // Watches and the Lease loop waiting out a failure for want of a response retry now.
    this.options.transport.connectivity.ready();
    this.options.pool.resume();
    this.options.metrics?.holding(false);
    this.options.logger.info(
      `the API server answers again after ${((Date.now() - this.since) / 1000).toFixed(1)} s; reconciles resume`,
    );
  }
}
