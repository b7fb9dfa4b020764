import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkQueue } from '../queue/queue.js';
import { ManualClock, seededRandom } from '@nestor/core';
import { WorkerPool } from './worker-pool.js';

/** One turn of the event loop: every pending microtask (dispatch included) runs first. */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

async function until(condition: () => boolean, what: string, turns = 100_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (condition()) return;
    await tick();
  }
  assert.fail(`gave up waiting for ${what}`);
}

/** A promise to settle by hand, to hold a run open. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Counts runs in progress and their peak. */
class Gauge {
  now = 0;
  peak = 0;
  enter(): void {
    this.peak = Math.max(this.peak, ++this.now);
  }
  leave(): void {
    this.now--;
  }
}

function queueWith(keys: number, prefix = 'k'): WorkQueue<string> {
  const queue = new WorkQueue<string>({ clock: new ManualClock() });
  for (let i = 0; i < keys; i++) queue.add(`${prefix}${i}`);
  return queue;
}

describe('WorkerPool', () => {
  it('never runs more than its concurrency across lanes, nor more than a lane allows', async () => {
    const pool = new WorkerPool({ concurrency: 3 });
    const total = new Gauge();
    const lanes = [5, 1, 2].map((maxConcurrent, i) => {
      const gauge = new Gauge();
      const queue = queueWith(40);
      let done = 0;
      pool.register({
        name: `lane${i}`,
        queue,
        maxConcurrent,
        process: async () => {
          total.enter();
          gauge.enter();
          await tick();
          await tick();
          gauge.leave();
          total.leave();
          done++;
        },
      });
      return { gauge, maxConcurrent, done: () => done };
    });
    await until(() => lanes.every((l) => l.done() === 40), 'every key to run');
    assert.equal(total.peak, 3);
    for (const lane of lanes) assert.ok(lane.gauge.peak <= lane.maxConcurrent);
    assert.equal(pool.activeWorkers, 0);
  });

  it('serves lanes round-robin: a deep backlog does not starve a small lane', async () => {
    const pool = new WorkerPool({ concurrency: 2 });
    const busy = queueWith(1000, 'a');
    const small = queueWith(5, 'b');
    let busyDone = 0;
    let smallDone = 0;
    let busyDoneWhenSmallFinished = -1;
    const work = async () => {
      await tick();
      await tick();
    };
    // Lane bounds above the pool's: only the pool's turn-taking keeps the small lane served.
    pool.register({ name: 'busy', queue: busy, maxConcurrent: 10, process: () => work().then(() => void busyDone++) });
    pool.register({
      name: 'small',
      queue: small,
      maxConcurrent: 10,
      process: () =>
        work().then(() => {
          if (++smallDone === 5) busyDoneWhenSmallFinished = busyDone;
        }),
    });
    await until(() => smallDone === 5, 'the small lane to finish');
    assert.ok(busyDoneWhenSmallFinished <= 6, `busy lane ran ${busyDoneWhenSmallFinished} keys meanwhile`);
    assert.ok(busy.length > 990);
    await until(() => busyDone === 1000, 'the busy lane to finish');
  });

  it('runs a key again after done() when it was added during its run', async () => {
    const pool = new WorkerPool({ concurrency: 4 });
    const queue = queueWith(0);
    const runs: string[] = [];
    pool.register({
      name: 'lane',
      queue,
      maxConcurrent: 4,
      process: async (key) => {
        runs.push(key);
        if (runs.length === 1) queue.add(key); // an event during the run
        await tick();
      },
    });
    queue.add('a');
    await until(() => runs.length === 2 && pool.activeWorkers === 0, 'the second run');
    assert.deepEqual(runs, ['a', 'a']);
  });

  it('reports a rejected process() and still marks the key done', async () => {
    const errors: [unknown, string, string][] = [];
    const pool = new WorkerPool({ concurrency: 1, onError: (...args) => errors.push(args) });
    const queue = queueWith(0);
    let runs = 0;
    pool.register({
      name: 'lane',
      queue,
      maxConcurrent: 1,
      process: async () => {
        runs++;
        throw new Error('boom');
      },
    });
    queue.add('a');
    await until(() => runs === 1 && pool.activeWorkers === 0, 'the failed run');
    assert.equal(errors.length, 1);
    assert.deepEqual(errors[0]!.slice(1), ['lane', 'a']);
    assert.equal(queue.processingCount, 0);
    queue.add('a');
    await until(() => runs === 2, 'the key to run again');
  });

  it('dispatches a lane registered with keys already queued, and stops at unregister', async () => {
    const pool = new WorkerPool({ concurrency: 1 });
    const queue = queueWith(3);
    const hold = gate();
    let runs = 0;
    const lane = pool.register({
      name: 'lane',
      queue,
      maxConcurrent: 1,
      process: async () => {
        runs++;
        await hold.opened;
      },
    });
    await until(() => runs === 1, 'the first run');
    assert.equal(lane.inFlight, 1);
    lane.unregister();
    hold.open();
    await until(() => pool.activeWorkers === 0, 'the run to finish');
    await tick();
    assert.equal(runs, 1);
    assert.equal(queue.length, 2, 'left in the queue');
  });

  it('drain waits for the runs in progress and starts no new one', async () => {
    const pool = new WorkerPool({ concurrency: 2 });
    const queue = queueWith(5);
    const hold = gate();
    let runs = 0;
    pool.register({
      name: 'lane',
      queue,
      maxConcurrent: 2,
      process: async () => {
        runs++;
        await hold.opened;
      },
    });
    await until(() => runs === 2, 'two runs');
    let drained: boolean | undefined;
    const draining = pool.drain(60_000).then((r) => (drained = r));
    await tick();
    assert.equal(drained, undefined);
    hold.open();
    assert.equal(await draining, true);
    await tick();
    assert.equal(runs, 2);
    assert.equal(queue.length, 3);
    assert.equal(await pool.drain(0), true, 'idle: at once');
  });

  it('drain gives up after the grace period', async () => {
    const clock = new ManualClock();
    const pool = new WorkerPool({ concurrency: 1, clock });
    const hold = gate();
    pool.register({ name: 'lane', queue: queueWith(1), maxConcurrent: 1, process: () => hold.opened });
    await until(() => pool.activeWorkers === 1, 'the run');
    const draining = pool.drain(1000);
    clock.advance(1000);
    assert.equal(await draining, false);
    hold.open();
    await until(() => pool.activeWorkers === 0, 'the late run to end');
  });

  it('rejects a concurrency that is not a positive integer', () => {
    assert.throws(() => new WorkerPool({ concurrency: 0 }), RangeError);
    const pool = new WorkerPool();
    assert.equal(pool.concurrency, 16);
    assert.throws(
      () => pool.register({ name: 'x', queue: queueWith(0), maxConcurrent: 1.5, process: async () => {} }),
      RangeError,
    );
  });

  it('never runs one key twice at once and runs every key after its last add (randomized, seeded)', async () => {
    const seed = 20240607;
    const rand = seededRandom(seed);
    const clock = new ManualClock();
    const pool = new WorkerPool({ concurrency: 8 });
    const inFlight = new Set<string>(); // `lane/key`, across all lanes
    const total = new Gauge();
    let overlaps = 0;
    let seq = 0;
    const lanes = ['a', 'b', 'c', 'd'].map((name) => {
      const queue = new WorkQueue<string>({ name, clock });
      const lane = {
        name,
        queue,
        maxConcurrent: 1 + Math.floor(rand() * 4),
        gauge: new Gauge(),
        lastAdd: new Map<string, number>(),
        seenAtStart: new Map<string, number>(),
      };
      pool.register({
        name,
        queue,
        maxConcurrent: lane.maxConcurrent,
        process: async (key) => {
          const id = `${name}/${key}`;
          if (inFlight.has(id)) overlaps++;
          inFlight.add(id);
          total.enter();
          lane.gauge.enter();
          lane.seenAtStart.set(key, lane.lastAdd.get(key) ?? 0);
          for (let turns = Math.floor(rand() * 4); turns > 0; turns--) {
            await tick();
            if (rand() < 0.05) request(lane, key); // an event for the key while it runs
          }
          lane.gauge.leave();
          total.leave();
          inFlight.delete(id);
        },
      });
      return lane;
    });
    type Lane = (typeof lanes)[number];
    function request(lane: Lane, key: string): void {
      lane.lastAdd.set(key, ++seq);
      if (rand() < 0.7) lane.queue.add(key);
      else lane.queue.addAfter(key, 1 + Math.floor(rand() * 50));
    }

    for (let op = 0; op < 6000; op++) {
      request(lanes[Math.floor(rand() * lanes.length)]!, `k${Math.floor(rand() * 200)}`);
      if (rand() < 0.1) clock.advance(Math.floor(rand() * 20));
      if (rand() < 0.2) await tick();
    }
    const settled = () =>
      pool.activeWorkers === 0 &&
      lanes.every((l) => l.queue.length === 0 && l.queue.delayedCount === 0 && l.queue.processingCount === 0);
    await until(() => {
      clock.advance(10);
      return settled();
    }, `the pool to settle (seed ${seed})`);

    assert.equal(overlaps, 0, `a key ran twice at once (seed ${seed})`);
    assert.ok(total.peak <= 8);
    for (const lane of lanes) {
      assert.ok(lane.gauge.peak <= lane.maxConcurrent, `lane ${lane.name} exceeded its bound`);
      for (const [key, last] of lane.lastAdd) {
        assert.equal(lane.seenAtStart.get(key), last, `${lane.name}/${key}: its last add was never run (seed ${seed})`);
      }
    }
  });

  it('holds a group of lanes (one cluster) while the others run, and dispatches its keys once resumed', async () => {
    const pool = new WorkerPool({ concurrency: 2 });
    const held = pool.group();
    const ran = { a: 0, b: 0 };
    const register = (name: 'a' | 'b', group?: ReturnType<WorkerPool['group']>) =>
      pool.register({
        name,
        queue: queueWith(5, name),
        maxConcurrent: 2,
        process: async () => {
          ran[name]++;
          await tick();
        },
        ...(group ? { group } : {}),
      });
    held.pause();
    register('a', held);
    register('b');
    await until(() => ran.b === 5, "the other lane's keys");
    for (let i = 0; i < 10; i++) await tick();
    assert.equal(ran.a, 0, 'a held group dispatches nothing');
    held.resume();
    await until(() => ran.a === 5, "the held lane's keys once resumed");
  });
});
