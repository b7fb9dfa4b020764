import { systemClock, type Clock } from '@nestor/core';

/**
 * A token bucket that refuses rather than queues: `perSecond` reviews a second, in bursts
 * up to `burst`. A request beyond it is answered at once (429 with Retry-After), so a flood
 * holds no memory and costs the API server nothing past the rate.
 */
export class ReviewRateLimit {
  private tokens: number;
  private last: number;

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    private readonly clock: Clock = systemClock,
  ) {
    if (!(perSecond > 0) || !(burst >= 1) || !Number.isFinite(perSecond) || !Number.isFinite(burst)) {
      throw new RangeError(`ReviewRateLimit needs perSecond > 0 and burst >= 1, got ${perSecond} and ${burst}`);
    }
    this.tokens = burst;
    this.last = clock.now();
  }

  /** Takes one review from the bucket: 0 when taken, else the ms until one is free (nothing taken). */
  take(): number {
    const now = this.clock.now();
    // A clock that steps back refills nothing.
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
      this.last = now;
    }
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) * 1000) / this.perSecond);
  }
}
