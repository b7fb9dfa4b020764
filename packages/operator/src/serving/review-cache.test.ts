import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '@nestor/core';
import { ReviewCache, type ReviewCacheOptions } from './review-cache.js';

/** A review that counts its calls and answers `answer(key)`: keys starting with "bad" are refused. */
function counter(answer: (key: string) => string | Error = (key) => (key.startsWith('bad') ? 'refused' : `ok:${key}`)) {
  const calls: string[] = [];
  const approvedBefore: boolean[] = [];
  return {
    calls,
    approvedBefore,
    review: (key: string) => async (before: boolean) => {
      calls.push(key);
      approvedBefore.push(before);
      const result = answer(key);
      if (result instanceof Error) throw result;
      return result;
    },
  };
}

function cache(options: Partial<ReviewCacheOptions<string>> = {}) {
  const clock = new ManualClock();
  return {
    clock,
    cache: new ReviewCache<string>({
      approves: (value) => value !== 'refused',
      approvalTtlMs: 60_000,
      refusalTtlMs: 10_000,
      clock,
      ...options,
    }),
  };
}

describe('ReviewCache', () => {
  it('answers from the cache until the TTL passes, then reviews again', async () => {
    const { cache: reviews, clock } = cache();
    const { calls, review } = counter();
    assert.equal(await reviews.get('a', review('a')), 'ok:a');
    clock.advance(59_999);
    assert.equal(await reviews.get('a', review('a')), 'ok:a');
    assert.equal(calls.length, 1, 'one review within the TTL');
    clock.advance(1);
    await reviews.get('a', review('a'));
    assert.equal(calls.length, 2, 'reviewed again once expired');
  });

  it('keeps a refusal for its shorter TTL', async () => {
    const { cache: reviews, clock } = cache();
    const { calls, review } = counter();
    await reviews.get('good', review('good'));
    await reviews.get('bad', review('bad'));
    clock.advance(9_999);
    assert.equal(await reviews.get('bad', review('bad')), 'refused');
    clock.advance(1);
    await reviews.get('good', review('good'));
    await reviews.get('bad', review('bad'));
    assert.deepEqual(calls, ['good', 'bad', 'bad'], 'the refusal expired, the approval did not');
  });

  it('tells the review whether the key was approved before: an expired approval is remembered', async () => {
    const { cache: reviews, clock } = cache();
    const { approvedBefore, review } = counter();
    await reviews.get('a', review('a'));
    await reviews.get('bad', review('bad'));
    clock.advance(60_000);
    await reviews.get('a', review('a'));
    await reviews.get('bad', review('bad'));
    await reviews.get('new', review('new'));
    assert.deepEqual(approvedBefore, [false, false, true, false, false]);
  });

  it('forgets an approval the next review refuses', async () => {
    const { cache: reviews, clock } = cache();
    let revoked = false;
    const { approvedBefore, review } = counter(() => (revoked ? 'refused' : 'ok'));
    await reviews.get('k', review('k'));
    revoked = true;
    clock.advance(60_000);
    assert.equal(await reviews.get('k', review('k')), 'refused');
    assert.equal(reviews.approvalCount, 0);
    clock.advance(10_000);
    await reviews.get('k', review('k'));
    assert.deepEqual(approvedBefore, [false, true, false], 'no longer known once refused');
  });

  it('shares one review between concurrent lookups of a key', async () => {
    const { cache: reviews } = cache();
    let release!: (value: string) => void;
    let calls = 0;
    const review = () => {
      calls++;
      return new Promise<string>((resolve) => (release = resolve));
    };
    const lookups = [reviews.get('k', review), reviews.get('k', review), reviews.get('k', review)];
    release('done');
    assert.deepEqual(await Promise.all(lookups), ['done', 'done', 'done']);
    assert.equal(calls, 1);
  });

  it('keeps no failure: the next lookup reviews again, and an expired approval stays known', async () => {
    const { cache: reviews, clock } = cache();
    let fail = false;
    const { calls, approvedBefore, review } = counter(() => (fail ? new Error('connection refused') : 'ok'));
    await reviews.get('k', review('k'));
    clock.advance(60_000);
    fail = true;
    await assert.rejects(reviews.get('k', review('k')), /connection refused/);
    fail = false;
    assert.equal(await reviews.get('k', review('k')), 'ok');
    assert.equal(calls.length, 3);
    assert.deepEqual(approvedBefore, [false, true, true]);
    assert.equal(reviews.size, 1);
  });

  it('holds at most maxEntries approvals, dropping the least recently used', async () => {
    const { cache: reviews } = cache({ maxEntries: 2 });
    const { calls, review } = counter();
    await reviews.get('a', review('a'));
    await reviews.get('b', review('b'));
    await reviews.get('a', review('a')); // a is now the most recently used
    await reviews.get('c', review('c')); // pushes b out
    assert.equal(reviews.size, 2);
    await reviews.get('a', review('a'));
    await reviews.get('b', review('b'));
    assert.deepEqual(calls, ['a', 'b', 'c', 'b']);
  });

  it('keeps approvals apart from refusals: a flood of refusals pushes out no approval', async () => {
    const { cache: reviews } = cache({ maxEntries: 4 });
    const { calls, review } = counter();
    await reviews.get('scraper', review('scraper'));
    for (let i = 0; i < 1000; i++) await reviews.get(`bad${i}`, review(`bad${i}`));
    assert.equal(reviews.size, 5, 'one approval and at most 4 refusals');
    assert.equal(await reviews.get('scraper', review('scraper')), 'ok:scraper');
    assert.equal(calls.filter((key) => key === 'scraper').length, 1, 'the approval was kept');
  });

  it('keeps nothing with a TTL of 0, and refuses a bound below 1', async () => {
    const { cache: reviews } = cache({ approvalTtlMs: 0, refusalTtlMs: 0 });
    const { calls, review } = counter();
    await reviews.get('a', review('a'));
    await reviews.get('a', review('a'));
    await reviews.get('bad', review('bad'));
    await reviews.get('bad', review('bad'));
    assert.equal(calls.length, 4);
    assert.throws(
      () => new ReviewCache({ approves: () => true, approvalTtlMs: 1, refusalTtlMs: 1, maxEntries: 0 }),
      /maxEntries must be at least 1, got 0/,
    );
  });
});
