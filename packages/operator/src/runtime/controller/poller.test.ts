import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock, type ObjectRef } from '@nestor/core';
import { waitFor } from '@nestor/testing';
import { poll } from './poller.js';

interface Item {
  id: string;
  value: number;
}

/** A list function whose answers the test sets, counting calls and calls in flight. */
function fakeApi(initial: Item[] = []) {
  const api = {
    items: initial,
    failNext: 0,
    calls: 0,
    inFlight: 0,
    maxInFlight: 0,
    /** Resolves the pending call when `hold` is set. */
    hold: false,
    release: undefined as (() => void) | undefined,
    lastSignal: undefined as AbortSignal | undefined,
    async list(signal: AbortSignal): Promise<Item[]> {
      api.calls++;
      api.lastSignal = signal;
      api.inFlight++;
      api.maxInFlight = Math.max(api.maxInFlight, api.inFlight);
      try {
        if (api.hold) await new Promise<void>((resolve) => (api.release = resolve));
        if (api.failNext > 0) {
          api.failNext--;
          throw new Error('503 Service Unavailable');
        }
        return api.items.map((i) => ({ ...i }));
      } finally {
        api.inFlight--;
      }
    },
  };
  return api;
}

/** Lets the poller's promise callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const names = (refs: ObjectRef[][]) => refs.map((batch) => batch.map((r) => r.name).sort());

describe('poll', () => {
  it('emits every item first, then those that appeared, changed or vanished', async () => {
    const clock = new ManualClock();
    const api = fakeApi([
      { id: 'a', value: 1 },
      { id: 'b', value: 1 },
    ]);
    const emitted: ObjectRef[][] = [];
    const subscription = poll(api.list, { intervalMs: 1000, key: (i) => i.id, namespace: 'ns', clock }).subscribe(
      (refs) => emitted.push(refs),
    );
    await settle();
    assert.deepEqual(emitted, [
      [
        { namespace: 'ns', name: 'a' },
        { namespace: 'ns', name: 'b' },
      ],
    ]);

    clock.advance(1000); // nothing changed: nothing emitted
    await settle();
    assert.equal(api.calls, 2);
    assert.equal(emitted.length, 1);

    api.items = [
      { id: 'a', value: 2 }, // changed
      { id: 'c', value: 1 }, // appeared; b vanished
    ];
    clock.advance(1000);
    await settle();
    assert.deepEqual(names(emitted.slice(1)), [['a', 'b', 'c']]);
    subscription.unsubscribe();
    assert.equal(clock.pendingTimers, 0, 'unsubscribing stops the timer');
  });

  it('backs off exponentially (capped) on failures, keeps the last list, and polls at the interval again after', async () => {
    const clock = new ManualClock();
    const api = fakeApi([{ id: 'a', value: 1 }]);
    const errors: number[] = [];
    const emitted: ObjectRef[][] = [];
    poll(api.list, {
      intervalMs: 100,
      maxBackoffMs: 500,
      jitter: 0,
      key: (i) => i.id,
      clock,
      onError: (_error, retryInMs) => errors.push(retryInMs),
    }).subscribe((refs) => emitted.push(refs));
    await settle();
    assert.equal(emitted.length, 1);

    api.failNext = 4;
    for (const wait of [100, 200, 400, 500]) {
      clock.advance(wait);
      await settle();
    }
    assert.deepEqual(errors, [200, 400, 500, 500], 'doubling from the interval, capped');
    assert.equal(api.calls, 5);

    clock.advance(500); // the API answers again, with the same items: nothing new to report
    await settle();
    assert.equal(api.calls, 6);
    assert.equal(emitted.length, 1, 'a failure does not make everything look changed');
    clock.advance(100);
    await settle();
    assert.equal(api.calls, 7, 'back at the interval');
  });

  it('adds up to the jitter at random to each backoff wait, and refuses a jitter outside [0, 1]', async () => {
    const clock = new ManualClock();
    const api = fakeApi([{ id: 'a', value: 1 }]);
    const errors: number[] = [];
    poll(api.list, {
      intervalMs: 100,
      maxBackoffMs: 500,
      jitter: 0.5,
      random: () => 0.5,
      key: (i) => i.id,
      clock,
      onError: (_error, retryInMs) => errors.push(retryInMs),
    }).subscribe();
    await settle();
    api.failNext = 3;
    for (const wait of [100, 250, 500]) {
      clock.advance(wait);
      await settle();
    }
    assert.deepEqual(errors, [250, 500, 625], 'each wait is the capped doubling plus a quarter (0.5 × 0.5)');
    assert.throws(
      () => poll(api.list, { intervalMs: 100, jitter: 2, key: (i) => i.id }),
      /jitter must be within \[0, 1\], not 2/,
    );
  });

  it('never overlaps calls, and aborts the one in flight on unsubscribe', async () => {
    const clock = new ManualClock();
    const api = fakeApi([{ id: 'a', value: 1 }]);
    api.hold = true;
    const subscription = poll(api.list, { intervalMs: 10, key: (i) => i.id, clock }).subscribe();
    await settle();
    clock.advance(1000); // a hundred intervals pass while the call hangs
    await settle();
    assert.equal(api.calls, 1);
    api.release!(); // it ends long after its interval: the next call starts at once
    await settle();
    clock.advance(0);
    assert.equal(api.calls, 2);
    assert.equal(api.maxInFlight, 1);
    subscription.unsubscribe();
    assert.equal(api.lastSignal?.aborted, true);
    api.release!();
    await settle();
    assert.equal(api.calls, 2);
  });

  it('treats a key function that throws as a failed poll', async () => {
    const clock = new ManualClock();
    const errors: string[] = [];
    const api = fakeApi([{ id: '', value: 1 }]);
    const key = (i: Item) => {
      if (!i.id) throw new Error('an item without an id');
      return i.id;
    };
    poll(api.list, { intervalMs: 10, key, clock, onError: (e) => errors.push(e.message) }).subscribe();
    await settle();
    assert.deepEqual(errors, ['an item without an id']);
  });

  it('stops and completes when its signal aborts, on the real clock', async () => {
    const api = fakeApi([{ id: 'a', value: 1 }]);
    const abort = new AbortController();
    let completed = false;
    poll(api.list, { intervalMs: 5, key: (i) => i.id, signal: abort.signal }).subscribe({
      complete: () => (completed = true),
    });
    await waitFor(() => api.calls >= 3, { what: 'three polls' });
    abort.abort();
    assert.equal(completed, true);
  });

  it('refuses bad options with a clear error', () => {
    assert.throws(() => poll(async () => [], { intervalMs: 0, key: String }), /intervalMs must be a number/);
    assert.throws(() => poll(async () => [], { intervalMs: 10 } as never), /options.key must be a function/);
  });
});
