import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '@nestor/core';
import { ReviewCache } from './review-cache.js';

/** A review that counts its calls and answers `answer(key)`. */
function counter(answer: (key: string) => string | Error = (key) => `result:${key}`) {
  const calls: string[] = [];
  return {
    calls,
    review: (key: string) => async () => {
      calls.push(key);
      const result = answer(key);
      if (result instanceof Error) throw result;
      return result;
    },
  };
}

describe('ReviewCache', () => {
  it('answers from the cache until the TTL passes, then reviews again', async () => {
    const clock = new ManualClock();
    const cache = new ReviewCache<string>({ ttlMs: () => 60_000, clock });
    const { calls, review } = counter();
    assert.equal(await cache.get('a', review('a')), 'result:a');
    clock.advance(59_999);
    assert.equal(await cache.get('a', review('a')), 'result:a');
    assert.equal(calls.length, 1, 'one review within the TTL');
    clock.advance(1);
    await cache.get('a', review('a'));
    assert.equal(calls.length, 2, 'reviewed again once expired');
  });

  it('keeps each result for its own TTL: a denial shorter than an approval', async () => {
    const clock = new ManualClock();
    const cache = new ReviewCache<boolean>({ ttlMs: (allowed) => (allowed ? 60_000 : 10_000), clock });
    let reviews = 0;
    const review = (allowed: boolean) => async () => (reviews++, allowed);
    await cache.get('allowed', review(true));
    await cache.get('denied', review(false));
    clock.advance(10_000);
    await cache.get('allowed', review(true));
    await cache.get('denied', review(false));
    assert.equal(reviews, 3, 'the denial expired, the approval did not');
  });

  it('shares one review between concurrent lookups of a key', async () => {
    const cache = new ReviewCache<string>({ ttlMs: () => 60_000, clock: new ManualClock() });
    let release!: (value: string) => void;
    let reviews = 0;
    const review = () => {
      reviews++;
      return new Promise<string>((resolve) => (release = resolve));
    };
    const lookups = [cache.get('k', review), cache.get('k', review), cache.get('k', review)];
    release('done');
    assert.deepEqual(await Promise.all(lookups), ['done', 'done', 'done']);
    assert.equal(reviews, 1);
  });

  it('keeps no failure: the next lookup reviews again', async () => {
    const cache = new ReviewCache<string>({ ttlMs: () => 60_000, clock: new ManualClock() });
    let fail = true;
    const { calls, review } = counter(() => (fail ? new Error('connection refused') : 'ok'));
    await assert.rejects(cache.get('k', review('k')), /connection refused/);
    fail = false;
    assert.equal(await cache.get('k', review('k')), 'ok');
    assert.equal(calls.length, 2);
    assert.equal(cache.size, 1);
  });

  it('holds at most maxEntries results, dropping the least recently used', async () => {
    const cache = new ReviewCache<string>({ ttlMs: () => 60_000, maxEntries: 2, clock: new ManualClock() });
    const { calls, review } = counter();
    await cache.get('a', review('a'));
    await cache.get('b', review('b'));
    await cache.get('a', review('a')); // a is now the most recently used
    await cache.get('c', review('c')); // pushes b out
    assert.equal(cache.size, 2);
    await cache.get('a', review('a'));
    await cache.get('b', review('b'));
    assert.deepEqual(calls, ['a', 'b', 'c', 'b']);
  });

  it('keeps nothing with a TTL of 0, and refuses a bound below 1', async () => {
    const cache = new ReviewCache<string>({ ttlMs: () => 0, clock: new ManualClock() });
    const { calls, review } = counter();
    await cache.get('a', review('a'));
    await cache.get('a', review('a'));
    assert.equal(calls.length, 2);
    assert.throws(() => new ReviewCache({ ttlMs: () => 1, maxEntries: 0 }), /maxEntries must be at least 1, got 0/);
  });
});
