import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '@nestor/core';
import { ReviewRateLimit } from './review-rate-limit.js';

describe('ReviewRateLimit', () => {
  it('lets a burst through, then one per 1/rate, and says how long to wait without taking', () => {
    const clock = new ManualClock();
    const limit = new ReviewRateLimit(10, 3, clock);
    assert.deepEqual([limit.take(), limit.take(), limit.take()], [0, 0, 0]);
    assert.equal(limit.take(), 100, 'empty: a token in 100 ms');
    assert.equal(limit.take(), 100, 'a refusal takes nothing');
    clock.advance(60);
    assert.equal(limit.take(), 40);
    clock.advance(40);
    assert.equal(limit.take(), 0);
    assert.equal(limit.take(), 100);
  });

  it('refills up to the burst, never beyond', () => {
    const clock = new ManualClock();
    const limit = new ReviewRateLimit(10, 3, clock);
    clock.advance(3_600_000);
    let taken = 0;
    while (limit.take() === 0) taken++;
    assert.equal(taken, 3);
  });

  it('allows at most burst + rate x time over any stretch of calls', () => {
    const clock = new ManualClock();
    const limit = new ReviewRateLimit(10, 20, clock);
    let taken = 0;
    for (let ms = 0; ms < 5_000; ms++) {
      for (let i = 0; i < 3; i++) if (limit.take() === 0) taken++;
      clock.advance(1);
    }
    // 15,000 calls in 5 s: the burst, and one per 100 ms after it.
    assert.ok(taken <= 20 + 10 * 5 && taken >= 20 + 10 * 5 - 2, `${taken} taken`);
  });

  it('refills nothing when the clock steps back, and refuses nonsense settings', () => {
    let now = 50_000;
    const clock = { now: () => now, setTimeout: () => 0, clearTimeout: () => {} };
    const limit = new ReviewRateLimit(1, 1, clock);
    assert.equal(limit.take(), 0);
    now -= 10_000;
    assert.equal(limit.take(), 1000);
    now += 10_500;
    assert.equal(limit.take(), 500, 'only the time past the last reading counts');
    for (const [rate, burst] of [
      [0, 1],
      [1, 0],
      [Number.NaN, 1],
      [Number.POSITIVE_INFINITY, 1],
    ] as const) {
      assert.throws(() => new ReviewRateLimit(rate, burst, clock), /needs perSecond > 0 and burst >= 1/);
    }
  });
});
