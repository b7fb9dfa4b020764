import { systemClock, type Clock } from '@nestor/core';

/** Decides how long a key waits before its next try (client-go's workqueue.TypedRateLimiter). */
export interface RateLimiter<K = string> {
  /** Records one more failure of `key` and returns how many ms it should wait. */
  when(key: K): number;
  /** Stops tracking `key`: its next failure starts from the base delay again. */
  forget(key: K): void;
  /** Failures recorded for `key` since it was last forgotten. */
  retries(key: K): number;
}

/** Per key: `baseMs * 2^failures`, capped at `maxMs`. Defaults are controller-runtime's. */
export class ExponentialBackoffRateLimiter<K = string> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  when(key: K): number {
    const exponent = this.failures.get(key) ?? 0;
    this.failures.set(key, exponent + 1);
    // 2 ** exponent becomes Infinity past 1023 (and 0 * Infinity is NaN): both fail `<`.
    const backoff = this.baseMs * 2 ** exponent;
    return backoff < this.maxMs ? backoff : this.maxMs;
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  retries(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * One token bucket for all keys (overall qps with bursts), as golang.org/x/time/rate's
 * Limiter.Reserve: every call takes a token, borrowing from the future when none is
 * left, so a flood of failures is spread out at `qps` instead of retried at once.
 */
export class BucketRateLimiter<K = string> implements RateLimiter<K> {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly clock: Clock = systemClock,
  ) {
    if (!(qps > 0) || !(burst >= 1))
      throw new RangeError(`BucketRateLimiter needs qps > 0 and burst >= 1 (got ${qps}, ${burst})`);
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_key: K): number {
    const now = this.clock.now();
    // A clock that steps back refills nothing (and takes nothing back).
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
      this.last = now;
    }
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  forget(_key: K): void {}

  retries(_key: K): number {
    return 0;
  }
}

/** The longest delay of several limiters; every one of them records every failure. */
export class MaxOfRateLimiter<K = string> implements RateLimiter<K> {
  private readonly limiters: readonly RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    if (limiters.length === 0) throw new RangeError('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(key: K): number {
    let delay = 0;
    for (const limiter of this.limiters) delay = Math.max(delay, limiter.when(key));
    return delay;
  }

  forget(key: K): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  retries(key: K): number {
    let retries = 0;
    for (const limiter of this.limiters) retries = Math.max(retries, limiter.retries(key));
    return retries;
  }
}

/**
 * client-go's DefaultTypedControllerRateLimiter: per-key backoff 5 ms doubling to 1000 s,
 * and 10 qps with bursts of 100 overall, whichever is longer.
 */
export function defaultControllerRateLimiter<K = string>(clock: Clock = systemClock): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ExponentialBackoffRateLimiter<K>(5, 1_000_000),
    new BucketRateLimiter<K>(10, 100, clock),
  );
}
