import { systemClock, type Clock } from '@nestor/core';

export interface BackoffOptions {
  /** First delay (default 800 ms). */
  initialMs?: number;
  /** Cap on the doubling delay, before jitter (default 30 s). */
  maxMs?: number;
  factor?: number;
  /** Up to this fraction of the delay is added at random (default 1: a delay in [d, 2d)). */
  jitter?: number;
  /**
   * A failure this long after the last retry began (its wait over) starts again from
   * initialMs (default 2 min): the thing retried worked meanwhile.
   */
  resetAfterMs?: number;
  random?: () => number;
  clock?: Clock;
}

/**
 * Jittered exponential backoff that forgets past failures after a quiet period: client-go's
 * ExponentialBackoffManager with the reflector's settings (0.8 s doubling to 30 s, jitter
 * 1.0, reset after 2 min), so a watch that was healthy for a while retries quickly again.
 * The quiet period is counted from the end of the last wait, not from the failure before
 * it: a wait of up to 60 s (30 s and its jitter) is not time spent working.
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private readonly random: () => number;
  private readonly clock: Clock;
  private currentMs = 0;
  /** When the last wait ended (the retry began). */
  private quietSince = -Infinity;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 1;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    this.random = options.random ?? Math.random;
    this.clock = options.clock ?? systemClock;
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    const now = this.clock.now();
    this.currentMs =
      now - this.quietSince > this.resetAfterMs ? this.initialMs : Math.min(this.currentMs * this.factor, this.maxMs);
    const delay = Math.round(this.currentMs * (1 + this.random() * this.jitter));
    this.quietSince = now + delay;
    return delay;
  }

  /** Forgets past failures at once. */
  reset(): void {
    this.quietSince = -Infinity;
  }
}
