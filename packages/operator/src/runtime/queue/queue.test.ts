import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkQueue, type QueueMetricsSink } from './queue.js';
import { ManualClock, seededRandom } from '@nestor/core';

function setup() {
  const clock = new ManualClock();
  const queue = new WorkQueue<string>({ name: 'test', clock });
  return { clock, queue };
}

/** Every key get() hands out now, each marked done. */
function drainReady(queue: WorkQueue<string>): string[] {
  const keys: string[] = [];
  for (let key = queue.get(); key !== undefined; key = queue.get()) {
    keys.push(key);
    queue.done(key);
  }
  return keys;
}

describe('WorkQueue', () => {
  it('hands keys out in FIFO order and ignores adds of a queued key', () => {
    const { queue } = setup();
    for (const key of ['a', 'b', 'a', 'c', 'b']) queue.add(key);
    assert.equal(queue.length, 3);
    assert.equal(queue.get(), 'a');
    assert.equal(queue.get(), 'b');
    assert.equal(queue.get(), 'c');
    assert.equal(queue.get(), undefined);
    assert.equal(queue.processingCount, 3);
  });

  it('keeps one run per key: an add during the run parks it, done() queues it again', () => {
    const { queue } = setup();
    queue.add('a');
    assert.equal(queue.get(), 'a');
    queue.add('a');
    queue.add('a');
    assert.equal(queue.length, 0, 'parked, not ready');
    assert.equal(queue.get(), undefined, 'never handed out while it runs');
    queue.done('a');
    assert.equal(queue.length, 1);
    assert.equal(queue.get(), 'a', 'reconciled again after the run');
    queue.done('a');
    assert.equal(queue.get(), undefined, 'once: the two adds during the run were one');
  });

  it('runs one key of a group at a time: the others wait for its done(), none is lost', () => {
    const queue = new WorkQueue<string>({ clock: new ManualClock(), groupOf: (key) => key.split('#')[0] });
    queue.add('a');
    queue.add('a#timer');
    queue.add('b#timer');
    assert.equal(queue.get(), 'a');
    assert.equal(queue.get(), 'b#timer', 'a#timer waits: a is running');
    assert.equal(queue.get(), undefined);
    queue.add('a#timer'); // already waiting: deduplicated
    queue.add('a'); // added again while it runs
    queue.done('a');
    assert.deepEqual([queue.get(), queue.get()], ['a', undefined], 'a again first; a#timer parked behind it');
    queue.done('a');
    assert.equal(queue.get(), 'a#timer');
    queue.add('a');
    assert.equal(queue.get(), undefined, 'a waits for its timer');
    queue.done('a#timer');
    queue.done('b#timer');
    assert.deepEqual(drainReady(queue), ['a']);
    assert.equal(queue.processingCount, 0);
  });

  it('with a group per key behaves as without groups', () => {
    const grouped = new WorkQueue<string>({ clock: new ManualClock(), groupOf: (key) => key });
    const plain = new WorkQueue<string>({ clock: new ManualClock() });
    const trace = (queue: WorkQueue<string>) => {
      const out: string[] = [];
      const running: string[] = [];
      const r = seededRandom(7);
      for (let i = 0; i < 500; i++) {
        const roll = r();
        if (roll < 0.5) queue.add(`k${Math.floor(r() * 10)}`);
        else if (roll < 0.8) {
          const key = queue.get();
          if (key !== undefined) running.push(key);
          out.push(key ?? '-');
        } else if (running.length) queue.done(running.splice(Math.floor(r() * running.length), 1)[0]!);
      }
      return out;
    };
    assert.deepEqual(trace(grouped), trace(plain));
  });

  it('runs the keys added at low priority after every normal one; a normal add moves one up', () => {
    const { queue } = setup();
    queue.add('echo-1', 'low');
    queue.add('a');
    queue.add('echo-2', 'low');
    queue.add('echo-3', 'low');
    queue.add('b');
    queue.add('echo-2'); // another change of it came: not an echo any more
    queue.add('echo-3', 'low'); // already waiting: deduplicated
    queue.add('a', 'low'); // waits at normal priority already: stays there
    assert.deepEqual(drainReady(queue), ['a', 'b', 'echo-2', 'echo-1', 'echo-3']);
    assert.equal(queue.length, 0, 'the old place of the key moved up is gone too');
  });

  it('queues a running key added at low priority behind the normal ones at done(), or with them once a normal add came', () => {
    const { queue } = setup();
    queue.add('a');
    queue.add('b');
    assert.equal(queue.get(), 'a');
    queue.add('a', 'low'); // its own write's echo, during its run
    queue.add('c');
    queue.done('a');
    assert.deepEqual(drainReady(queue), ['b', 'c', 'a']);
    queue.add('a');
    assert.equal(queue.get(), 'a');
    queue.add('a', 'low');
    queue.add('a'); // and a change from elsewhere
    queue.add('d');
    queue.done('a');
    assert.deepEqual(drainReady(queue), ['d', 'a']);
  });

  it('moves a key behind the others at get() when its echo check says so, once', () => {
    const echoes = new Set(['b']);
    const queue = new WorkQueue<string>({ clock: new ManualClock(), echo: (key) => echoes.delete(key) });
    for (const key of ['a', 'b', 'c']) queue.add(key);
    queue.add('d', 'low');
    assert.deepEqual(drainReady(queue), ['a', 'c', 'd', 'b']);
    queue.add('b');
    assert.deepEqual(drainReady(queue), ['b'], 'the check answered for that write only');
  });

  it('loses no key and runs none twice at once, over random adds at both priorities, with groups', () => {
    const r = seededRandom(11);
    const queue = new WorkQueue<string>({ clock: new ManualClock(), groupOf: (key) => key.split('#')[0] });
    const keys = ['a', 'a#t', 'b', 'b#t', 'c', 'd', 'e'];
    const running = new Set<string>();
    /** Keys added since their last get(): each must run again. */
    const owed = new Set<string>();
    const take = () => {
      const key = queue.get();
      if (key === undefined) return;
      const group = key.split('#')[0];
      assert.ok(![...running].some((k) => k.split('#')[0] === group), `${key} runs beside its group`);
      running.add(key);
      owed.delete(key);
    };
    for (let i = 0; i < 5_000; i++) {
      const roll = r();
      if (roll < 0.45) {
        const key = keys[Math.floor(r() * keys.length)]!;
        queue.add(key, r() < 0.5 ? 'low' : 'normal');
        owed.add(key);
      } else if (roll < 0.75) take();
      else if (running.size > 0) {
        const key = [...running][Math.floor(r() * running.size)]!;
        running.delete(key);
        queue.done(key);
      }
    }
    for (const key of running) queue.done(key);
    running.clear();
    for (let key = queue.get(); key !== undefined; key = queue.get()) {
      owed.delete(key);
      queue.done(key);
    }
    assert.deepEqual([...owed], [], 'every key added since its last run ran again');
    assert.equal(queue.length, 0);
  });

  it('ignores done() of a key that is not processing', () => {
    const { queue } = setup();
    queue.add('a');
    queue.done('a');
    assert.equal(queue.length, 1);
    assert.deepEqual(drainReady(queue), ['a']);
  });

  it('holds a delayed add until its time, with one timer for all of them, earliest first', () => {
    const { clock, queue } = setup();
    queue.addAfter('c', 30);
    queue.addAfter('a', 10);
    queue.addAfter('b', 20);
    assert.equal(queue.delayedCount, 3);
    assert.equal(clock.pendingTimers, 1);
    clock.advance(9);
    assert.equal(queue.length, 0);
    clock.advance(1);
    assert.deepEqual(drainReady(queue), ['a']);
    clock.advance(20);
    assert.deepEqual(drainReady(queue), ['b', 'c']);
    assert.equal(queue.delayedCount, 0);
    assert.equal(clock.pendingTimers, 0);
  });

  it('keeps the earliest ready time of a key: a later delay is ignored, an earlier one replaces it', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 100);
    queue.addAfter('a', 50);
    queue.addAfter('a', 80);
    assert.equal(queue.delayedCount, 1);
    clock.advance(49);
    assert.equal(queue.length, 0);
    clock.advance(1);
    assert.deepEqual(drainReady(queue), ['a']);
    clock.advance(100);
    assert.deepEqual(drainReady(queue), [], 'the later delays were merged into the first');
  });

  it('treats a delay <= 0 as add()', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    assert.equal(queue.delayedCount, 0);
    assert.equal(clock.pendingTimers, 0);
    assert.deepEqual(drainReady(queue), ['a', 'b']);
  });

  it('runs a queued key now and again after the delay asked for it', () => {
    const { clock, queue } = setup();
    queue.add('a');
    queue.addAfter('a', 10);
    assert.equal(queue.length, 1);
    assert.equal(queue.delayedCount, 1);
    assert.deepEqual(drainReady(queue), ['a']);
    clock.advance(10);
    assert.deepEqual(drainReady(queue), ['a'], 'the delayed add still happens');

    queue.add('b');
    queue.addAfter('b', 10);
    clock.advance(10);
    assert.deepEqual(drainReady(queue), ['b'], 'a delayed add of a key still queued is a no-op');
  });

  it('gives every key its earliest requested time, over many random delays (heap order)', () => {
    const { clock, queue } = setup();
    const rand = seededRandom(7);
    const due = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const key = `k${Math.floor(rand() * 400)}`;
      const ms = 1 + Math.floor(rand() * 1000);
      queue.addAfter(key, ms);
      due.set(key, Math.min(due.get(key) ?? Infinity, ms));
    }
    assert.equal(queue.delayedCount, due.size);
    const seen = new Map<string, number>();
    queue.onReady(() => {
      const key = queue.get()!;
      seen.set(key, clock.now());
      queue.done(key);
    });
    clock.advance(1000);
    assert.deepEqual(seen, due);
  });

  it('never runs a key sooner than the server asked (Retry-After), even when it is added again', () => {
    const { clock, queue } = setup();
    queue.add('a');
    queue.add('b');
    assert.equal(queue.get(), 'a');
    queue.add('a'); // changed while it runs
    queue.addRateLimited('a', 1000); // its run was answered 429, Retry-After: 1
    queue.done('a');
    assert.deepEqual(drainReady(queue), ['b'], 'the change made during the run waits too');
    queue.add('a');
    clock.advance(999);
    assert.deepEqual(drainReady(queue), [], 'a change does not run it sooner');
    clock.advance(1);
    assert.deepEqual(drainReady(queue), ['a'], 'once, when the wait is over');
    queue.add('a');
    assert.deepEqual(drainReady(queue), ['a'], 'and added as usual after');
  });

  it('backs off by the longer of its rate limiter and the wait asked for', () => {
    const { clock, queue } = setup();
    for (let i = 0; i < 12; i++) queue.addRateLimited('a'); // backoff now 5 ms * 2^12 = 20.5 s
    clock.advance(30_000);
    drainReady(queue);
    queue.addRateLimited('a', 1000);
    clock.advance(1000);
    assert.deepEqual(drainReady(queue), [], 'its backoff (20.5 s) is longer than the 1 s asked');
    clock.advance(19_480);
    assert.deepEqual(drainReady(queue), ['a']);
  });

  it('backs off 5, 10, 20, ... ms per key, resets on forget, and caps at 1000 s', () => {
    const { clock, queue } = setup(); // the default limiter: its bucket allows a burst of 100
    const readyAfter = (key: string): number => {
      const start = clock.now();
      let readyAt = NaN;
      const unsubscribe = queue.onReady(() => (readyAt = clock.now()));
      queue.addRateLimited(key);
      clock.advance(2_000_000);
      unsubscribe();
      assert.deepEqual(drainReady(queue), [key]);
      return readyAt - start;
    };
    assert.deepEqual(
      [1, 2, 3, 4].map(() => readyAfter('a')),
      [5, 10, 20, 40],
    );
    assert.equal(queue.numRequeues('a'), 4);
    assert.equal(readyAfter('b'), 5, 'per key');
    queue.forget('a');
    assert.equal(queue.numRequeues('a'), 0);
    assert.equal(readyAfter('a'), 5);

    const delays = Array.from({ length: 22 }, () => readyAfter('c'));
    assert.equal(delays[17], 5 * 2 ** 17);
    assert.deepEqual(delays.slice(18), [1_000_000, 1_000_000, 1_000_000, 1_000_000]);
  });

  it('stops intake on shutDown, drops the delayed adds and hands nothing out', () => {
    const { clock, queue } = setup();
    queue.add('queued');
    queue.addAfter('later', 10);
    queue.shutDown();
    assert.ok(queue.isShuttingDown);
    assert.equal(queue.delayedCount, 0);
    assert.equal(clock.pendingTimers, 0);
    queue.add('a');
    queue.addAfter('b', 0);
    queue.addAfter('c', 10);
    queue.addRateLimited('d');
    assert.equal(queue.length, 1, 'only the key queued before');
    assert.equal(queue.numRequeues('d'), 0, 'no backoff recorded after shutdown');
    assert.equal(queue.get(), undefined);
    clock.advance(100);
    assert.equal(queue.get(), undefined);
  });

  it('shutDownWithDrain waits for the runs in progress', async () => {
    const { queue } = setup();
    queue.add('a');
    queue.add('b');
    queue.get();
    queue.get();
    let result: boolean | undefined;
    const drained = queue.shutDownWithDrain(1000).then((r) => (result = r));
    queue.done('a');
    await Promise.resolve();
    assert.equal(result, undefined, 'b still runs');
    queue.done('b');
    assert.equal(await drained, true);
    assert.equal(await queue.shutDownWithDrain(1000), true, 'nothing running: at once');
  });

  it('shutDownWithDrain gives up after the grace period', async () => {
    const { clock, queue } = setup();
    queue.add('a');
    queue.get();
    const drained = queue.shutDownWithDrain(100);
    clock.advance(99);
    clock.advance(1);
    assert.equal(await drained, false);
    queue.done('a'); // late: harmless
    assert.equal(queue.processingCount, 0);
  });

  it('signals onReady when a key becomes ready, until unsubscribed', () => {
    const { clock, queue } = setup();
    let calls = 0;
    const unsubscribe = queue.onReady(() => calls++);
    queue.add('a');
    queue.add('a');
    assert.equal(calls, 1, 'not for a dedup’d add');
    queue.get();
    queue.add('a');
    assert.equal(calls, 1, 'not for a parked key');
    queue.done('a');
    assert.equal(calls, 2, 'when the parked key is queued again');
    queue.addAfter('b', 5);
    clock.advance(5);
    assert.equal(calls, 3, 'when a delayed add falls due');
    unsubscribe();
    queue.add('c');
    assert.equal(calls, 3);
  });

  it('reports adds, depth, latencies and retries to its metrics sink', () => {
    const clock = new ManualClock();
    const seen = { adds: 0, retries: 0, depth: [] as number[], latency: [] as number[], work: [] as number[] };
    const metrics: QueueMetricsSink = {
      add: () => seen.adds++,
      depth: (n) => seen.depth.push(n),
      queueLatency: (s) => seen.latency.push(s),
      workDuration: (s) => seen.work.push(s),
      retry: () => seen.retries++,
    };
    const queue = new WorkQueue<string>({ clock, metrics });
    queue.add('a');
    queue.add('a');
    queue.add('b');
    assert.equal(seen.adds, 2);
    assert.deepEqual(seen.depth, [1, 2]);
    clock.advance(3000);
    queue.get();
    assert.deepEqual(seen.latency, [3]);
    assert.deepEqual(seen.depth, [1, 2, 1]);
    clock.advance(1000);
    queue.get();
    clock.advance(1000);
    assert.equal(queue.unfinishedWorkSeconds(), 3);
    assert.equal(queue.longestRunningProcessorSeconds(), 2);
    queue.done('a');
    assert.deepEqual(seen.work, [2]);
    queue.addAfter('c', 10);
    queue.addRateLimited('d');
    assert.equal(seen.retries, 2);
  });
});
