import { type Clock, sleep, systemClock } from '@nestor/core';

/**
 * Paces a migration's writes: a token bucket of `perSecond` tokens with a burst of one
 * second's worth, each write taking one (waiting for it when none is left, as x/time/rate's
 * Reserve). A rewrite the API server found a no-op (the object is stored in the storage
 * version already: no etcd write, no watch event) gives its token back, so a migration
 * started again after a restart walks the objects it did at the speed of its requests.
 */
export class WritePacer {
  private tokens: number;
  private last: number;
  private readonly burst: number;

  constructor(
    private readonly perSecond: number,
    private readonly clock: Clock = systemClock,
    /** How a wait is slept (a test's clock; the default keeps the process alive, as a CLI run needs). */
    private readonly wait: (ms: number, signal?: AbortSignal) => Promise<void> = sleep,
  ) {
    if (!(perSecond > 0)) throw new RangeError(`writes per second must be above 0 (got ${perSecond})`);
    this.burst = Number.isFinite(perSecond) ? Math.max(1, perSecond) : Infinity;
    this.tokens = this.burst;
    this.last = clock.now();
  }

  /** Takes a token: resolves at once, or once the bucket has refilled to it (early if `signal` aborts). */
  take(signal?: AbortSignal): Promise<void> {
    if (!Number.isFinite(this.perSecond)) return Promise.resolve();
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? Promise.resolve() : this.wait((-this.tokens * 1000) / this.perSecond, signal);
  }

  /** Gives a token back: the write it was taken for wrote nothing. */
  refund(): void {
    this.refill();
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }

  private refill(): void {
    const now = this.clock.now();
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
      this.last = now;
    }
  }
}
