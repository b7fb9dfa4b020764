import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ExponentialBackoffRateLimiter,
  MaxOfRateLimiter,
} from './rate-limiter.js';
import { ManualClock } from '@nestor/core';

describe('ExponentialBackoffRateLimiter', () => {
  it('doubles from 5 ms per key, counts retries, and starts over after forget', () => {
    const limiter = new ExponentialBackoffRateLimiter();
    assert.deepEqual(
      Array.from({ length: 5 }, () => limiter.when('a')),
      [5, 10, 20, 40, 80],
    );
    assert.equal(limiter.retries('a'), 5);
    assert.equal(limiter.when('b'), 5, 'keys back off independently');
    limiter.forget('a');
    assert.equal(limiter.retries('a'), 0);
    assert.equal(limiter.when('a'), 5);
  });

  it('caps at 1000 s and stays there, however many failures', () => {
    const limiter = new ExponentialBackoffRateLimiter();
    let delay = 0;
    for (let i = 0; i < 2000; i++) delay = limiter.when('a'); // 2 ** 1999 is Infinity
    assert.equal(delay, 1_000_000);
    assert.equal(limiter.retries('a'), 2000);
    const zeroBase = new ExponentialBackoffRateLimiter(0, 10);
    for (let i = 0; i < 1100; i++) delay = zeroBase.when('a'); // 0 * Infinity is NaN
    assert.equal(delay, 10);
  });

  it('takes base and cap', () => {
    const limiter = new ExponentialBackoffRateLimiter(40, 100);
    assert.deepEqual(
      [1, 2, 3, 4].map(() => limiter.when('a')),
      [40, 80, 100, 100],
    );
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then spaces failures at qps, refilling with time', () => {
    const clock = new ManualClock();
    const limiter = new BucketRateLimiter(10, 100, clock);
    for (let i = 0; i < 100; i++) assert.equal(limiter.when(`k${i}`), 0);
    assert.equal(limiter.when('x'), 100);
    assert.equal(limiter.when('y'), 200);
    clock.advance(1000); // +10 tokens: 8 left after the two borrowed
    for (let i = 0; i < 8; i++) assert.equal(limiter.when(`r${i}`), 0);
    assert.equal(limiter.when('z'), 100);
    assert.equal(limiter.retries('z'), 0);
  });

  it('never holds more than the burst', () => {
    const clock = new ManualClock();
    const limiter = new BucketRateLimiter(10, 3, clock);
    clock.advance(3_600_000);
    assert.deepEqual(
      [1, 2, 3, 4].map(() => limiter.when('a')),
      [0, 0, 0, 100],
    );
  });

  it('rejects a bucket that could never give a token', () => {
    assert.throws(() => new BucketRateLimiter(0, 10), RangeError);
    assert.throws(() => new BucketRateLimiter(10, 0), RangeError);
  });
});

describe('MaxOfRateLimiter', () => {
  it('returns the longest delay and forgets in every limiter', () => {
    const limiter = new MaxOfRateLimiter(
      new ExponentialBackoffRateLimiter(5, 1000),
      new ExponentialBackoffRateLimiter(1, 8),
    );
    assert.deepEqual(
      [1, 2, 3].map(() => limiter.when('a')),
      [5, 10, 20],
    );
    assert.equal(limiter.retries('a'), 3);
    limiter.forget('a');
    assert.equal(limiter.retries('a'), 0);
    assert.equal(limiter.when('a'), 5);
  });

  it('defaultControllerRateLimiter: per-key backoff, and the overall bucket once the burst is spent', () => {
    const clock = new ManualClock();
    const limiter = defaultControllerRateLimiter(clock);
    assert.equal(limiter.when('a'), 5);
    assert.equal(limiter.when('a'), 10);
    for (let i = 0; i < 98; i++) limiter.when(`k${i}`);
    assert.equal(limiter.when('fresh'), 100, 'the 101st failure waits for a token');
    assert.equal(limiter.retries('a'), 2);
  });
});
