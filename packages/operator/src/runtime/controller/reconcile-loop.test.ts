import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock, type RuntimeLogger } from '@nestor/core';
import { FakeKubeClient } from '../../fake/fake-kube-client.js';
import { LeaseLostError } from '../leases/leader-election.js';
import { ManagedController } from './managed-controller.js';
import { WorkQueue } from '../queue/queue.js';
import { ReconcileLoop, type ReconcileOutcome } from './reconcile-loop.js';
import type { ReconcileResult } from './result.js';
import type { CatchUp } from './event-versions.js';

/** Every run's client: these tests write nothing. */
const client = new FakeKubeClient();

/** Runs one reconcile that returns `result` and says how it ended and what the queue does next. */
async function runOnce(result: unknown) {
  const clock = new ManualClock();
  const queue = new WorkQueue<string>({ clock });
  const errors: string[] = [];
  const log: RuntimeLogger = { debug() {}, info() {}, warn() {}, error: (message) => errors.push(message) };
  let outcome: ReconcileOutcome | undefined;
  const loop = new ReconcileLoop<unknown>({
    name: 'widgets',
    client,
    queue,
    reconcile: () => result as ReconcileResult,
    read: () => undefined,
    log,
    metrics: { reconciled: (o) => (outcome = o), activeWorkers() {} },
  });
  await loop.process('ns/a');
  return { outcome, errors, requeues: queue.numRequeues('ns/a') };
}

describe('reconcile results', () => {
  for (const [label, bad] of [
    ["{ requeueAfter: '5000' }", { requeueAfter: '5000' }],
    ['{ requeueAfter: -1 }', { requeueAfter: -1 }],
    ['{ requeueAfter: NaN }', { requeueAfter: Number.NaN }],
    ["{ requeue: 'yes' }", { requeue: 'yes' }],
    ['42', 42],
  ] as const) {
    it(`treats ${label} as an error that names the controller, retried with backoff`, async () => {
      const { outcome, errors, requeues } = await runOnce(bad);
      assert.equal(outcome, 'error');
      assert.equal(requeues, 1, 'retried with backoff, not forgotten');
      assert.match(
        errors[0] ?? '',
        /controller widgets: the reconciler returned .*(requeueAfter must be a number of milliseconds >= 0|requeue must be true or false|return nothing)/,
      );
    });
  }

  for (const [result, expected] of [
    [undefined, 'success'],
    [{}, 'success'],
    [{ requeueAfter: 0 }, 'success'],
    [{ requeueAfter: 5000 }, 'requeue_after'],
    [{ requeue: true }, 'requeue'],
  ] as const) {
    it(`accepts ${JSON.stringify(result) ?? 'nothing'} as ${expected}`, async () => {
      assert.equal((await runOnce(result)).outcome, expected);
    });
  }
});

describe('controller options', () => {
  const base = { name: 'widgets', sources: [], reconcile: () => undefined };
  it('refuses a maxConcurrentReconciles that is not a whole number >= 1, naming the controller', () => {
    for (const value of [2.5, 0, -1, Number.NaN, '4']) {
      assert.throws(
        () =>
          new ManagedController({
            client,
            ...base,
            resource: undefined,
            sources: [{ name: 's', stream: undefined as never }],
            maxConcurrentReconciles: value as number,
          }),
        new RegExp(
          `controller widgets: maxConcurrentReconciles must be a whole number of at least 1, got ${value === '4' ? '"4"' : String(value)}`,
        ),
      );
    }
  });

  it('refuses a reconcileTimeoutMs that is not a positive number of milliseconds', () => {
    assert.throws(
      () =>
        new ManagedController({
          client,
          ...base,
          sources: [{ name: 's', stream: undefined as never }],
          reconcileTimeoutMs: -5,
        }),
      /controller widgets: reconcileTimeoutMs must be a number of milliseconds greater than 0, got -5/,
    );
  });
});

describe('maxRetries', () => {
  /** A loop whose reconciler always throws, over a queue on a manual clock. */
  function failingLoop(maxRetries: number | undefined) {
    const clock = new ManualClock();
    const queue = new WorkQueue<string>({ clock });
    const attempts: number[] = [];
    const events: Array<{ type: string; reason: string; note: string; controller?: string }> = [];
    let exhausted = 0;
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'a', namespace: 'ns', uid: 'u' } };
    const loop = new ReconcileLoop<typeof widget>({
      client,
      name: 'widgets',
      queue,
      reconcile: ({ attempt }) => {
        attempts.push(attempt);
        throw new Error('the backend is down');
      },
      read: () => widget,
      log: { debug() {}, info() {}, warn() {}, error() {} },
      ...(maxRetries !== undefined ? { maxRetries } : {}),
      events: {
        record: (_object, type, reason, note, options) =>
          events.push({
            type,
            reason,
            note,
            ...(options?.reportingController ? { controller: options.reportingController } : {}),
          }),
      },
      metrics: { reconciled() {}, activeWorkers() {}, retriesExhausted: () => exhausted++ },
    });
    /** Runs what is ready, then moves time past any backoff, until nothing is left to run. */
    const drain = async () => {
      for (let i = 0; i < 20; i++) {
        const key = queue.get();
        if (key === undefined) {
          if (queue.delayedCount === 0) return;
          clock.advance(60_000);
          continue;
        }
        await loop.process(key);
        queue.done(key);
      }
    };
    return { queue, attempts, events, drain, exhausted: () => exhausted };
  }

  it('gives up after maxRetries failures in a row: no requeue, a Warning Event, a metric', async () => {
    const { queue, attempts, events, drain, exhausted } = failingLoop(3);
    queue.add('ns/a');
    await drain();
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.equal(queue.delayedCount + queue.length, 0, 'nothing scheduled: the queue forgot the key');
    assert.equal(queue.numRequeues('ns/a'), 0);
    assert.equal(exhausted(), 1);
    assert.equal(events.length, 1);
    assert.deepEqual(
      [events[0]!.type, events[0]!.reason, events[0]!.controller],
      ['Warning', 'RetriesExhausted', 'widgets'],
    );
    assert.match(
      events[0]!.note,
      /failed 3 times in a row .*not retrying until the object changes: the backend is down/,
    );

    // The object changes (a watch event adds its key): tried again, from attempt 1.
    queue.add('ns/a');
    await drain();
    assert.deepEqual(attempts, [1, 2, 3, 1, 2, 3]);
    assert.equal(exhausted(), 2);
  });

  it('retries for ever without it', async () => {
    const { queue, attempts, drain } = failingLoop(undefined);
    queue.add('ns/a');
    await drain();
    assert.equal(attempts.length, 10, 'still retrying when the test stops draining');
    assert.equal(queue.delayedCount + queue.length, 1, 'and one more scheduled');
  });

  it('refuses a maxRetries that is not a whole number >= 1', () => {
    assert.throws(
      () =>
        new ManagedController({
          client,
          name: 'widgets',
          sources: [{ name: 's', stream: undefined as never }],
          reconcile: () => undefined,
          maxRetries: 0,
        }),
      /controller widgets: maxRetries must be a whole number of at least 1, got 0/,
    );
  });
});

describe('a write refused by the fence', () => {
  /** A loop whose reconciler fails as `fail` says, with every outcome, metric and log line kept. */
  function fencedLoop(fail: (request: { signal: AbortSignal }) => unknown, maxRetries = 2) {
    const queue = new WorkQueue<string>({ clock: new ManualClock() });
    const seen = { reconciled: [] as string[], fenced: 0, exhausted: 0, errors: [] as string[], debug: [] as string[] };
    const loop = new ReconcileLoop<unknown>({
      client,
      name: 'widgets',
      queue,
      maxRetries,
      reconcile: async (request) => {
        throw fail(request);
      },
      read: () => undefined,
      log: {
        debug: (message) => seen.debug.push(message),
        info() {},
        warn() {},
        error: (message) => seen.errors.push(message),
      },
      metrics: {
        reconciled: (outcome) => seen.reconciled.push(outcome),
        fenced: () => seen.fenced++,
        retriesExhausted: () => seen.exhausted++,
        activeWorkers() {},
      },
    });
    return { queue, loop, seen };
  }

  for (const [label, fail] of [
    ['a LeaseLostError thrown by the client', () => new LeaseLostError('this replica does not hold the lease')],
    [
      'a LeaseLostError as the cause of the error the reconciler threw',
      () => new Error('could not scale', { cause: new LeaseLostError('lost') }),
    ],
  ] as const) {
    it(`is its own outcome, ${label}: no error, no backoff, no retry counted, the key forgotten`, async () => {
      const { queue, loop, seen } = fencedLoop(fail);
      for (let i = 0; i < 3; i++) {
        queue.add('ns/a');
        const key = queue.get()!;
        await loop.process(key);
        queue.done(key);
      }
      assert.deepEqual(seen.reconciled, [], 'not a reconcile result: neither an error nor a success');
      assert.equal(seen.fenced, 3);
      assert.deepEqual(seen.errors, []);
      assert.equal(seen.exhausted, 0, 'never counted towards maxRetries (2)');
      assert.equal(queue.length + queue.delayedCount, 0, 'not requeued: left to the replica that holds the Lease');
      assert.equal(queue.numRequeues('ns/a'), 0, 'no backoff');
      assert.match(seen.debug[0]!, /stopped by the write fence/);
      // Should this replica write again (it won the Lease back), the key is queued once more.
      loop.resume();
      assert.equal(queue.length, 1);
      assert.equal(queue.numRequeues('ns/a'), 0);
    });
  }

  it('is also how a run cut by the Lease loss ends (its signal aborted with a LeaseLostError)', async () => {
    const { queue, seen } = fencedLoop(() => new Error('never'));
    const cut = new ReconcileLoop<unknown>({
      client,
      name: 'widgets',
      queue,
      reconcile: ({ signal }) =>
        new Promise((_, reject) => {
          signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
        }),
      read: () => undefined,
      log: { debug() {}, info() {}, warn() {}, error: (message) => seen.errors.push(message) },
      metrics: { reconciled: (o) => seen.reconciled.push(o), fenced: () => seen.fenced++, activeWorkers() {} },
    });
    queue.add('ns/a');
    const running = cut.process(queue.get()!);
    await Promise.resolve();
    cut.abortAll(new LeaseLostError('this replica lost the lease'));
    await running;
    assert.deepEqual(seen.reconciled, []);
    assert.equal(seen.fenced, 1);
    assert.deepEqual(seen.errors, []);
    assert.equal(queue.numRequeues('ns/a'), 0);
  });

  it('leaves other errors as they were: counted, retried with backoff', async () => {
    const { queue, loop, seen } = fencedLoop(() => new Error('the backend is down'));
    queue.add('ns/a');
    await loop.process(queue.get()!);
    assert.deepEqual(seen.reconciled, ['error']);
    assert.equal(seen.fenced, 0);
    assert.equal(queue.numRequeues('ns/a'), 1);
  });
});

describe('the wait for the caches before a run', () => {
  function loopWith(
    catchUp: (key: string, signal: AbortSignal, object: unknown) => Promise<CatchUp> | undefined,
    read: (key: string) => unknown = () => undefined,
  ) {
    const queue = new WorkQueue<string>({ clock: new ManualClock() });
    const warnings: string[] = [];
    const log: RuntimeLogger = { debug() {}, info() {}, warn: (message) => warnings.push(message), error() {} };
    const runs: string[] = [];
    const given: unknown[] = [];
    const loop = new ReconcileLoop<unknown>({
      name: 'widgets',
      client,
      queue,
      reconcile: ({ key, object }) => void (runs.push(key), given.push(object)),
      read,
      catchUp,
      log,
    });
    return { loop, queue, warnings, runs, given };
  }

  it('gives the run the object whose version was waited for, not one that came during the wait', async () => {
    let current: unknown = { v: 1 };
    const waitedFor: unknown[] = [];
    const { loop, given } = loopWith(
      (_key, _signal, object) => {
        waitedFor.push(object);
        current = { v: 2 }; // an event while the run waits: the informer moved on
        return Promise.resolve({ outcome: 'reached' });
      },
      () => current,
    );
    await loop.process('ns/a');
    assert.deepEqual(waitedFor, [{ v: 1 }]);
    assert.deepEqual(given, [{ v: 1 }], 'the run is given what the caches were brought to');
  });

  it('deleted during the wait: no run, and nothing to wait for once deleted', async () => {
    let current: unknown = { v: 1 };
    const waitedFor: unknown[] = [];
    const { loop, queue, runs } = loopWith(
      (_key, _signal, object) => {
        waitedFor.push(object);
        if (object === null) return undefined;
        current = null;
        return Promise.resolve({ outcome: 'reached' });
      },
      () => current,
    );
    queue.add('ns/a');
    await loop.process(queue.get()!);
    await loop.process('ns/a');
    assert.deepEqual(runs, []);
    assert.deepEqual(waitedFor, [{ v: 1 }, null]);
  });

  it('runs once the caches reached the event, and at once when none is behind', async () => {
    const { loop, runs } = loopWith((key) =>
      key === 'ns/behind' ? Promise.resolve({ outcome: 'reached' }) : undefined,
    );
    await loop.process('ns/behind');
    await loop.process('ns/current');
    assert.deepEqual(runs, ['ns/behind', 'ns/current']);
  });

  it('past the bound: no run, a warning that says why, a retry with backoff', async () => {
    const behind = 'the cache of configmaps in ns stands at resourceVersion 10, behind 11';
    const { loop, queue, warnings, runs } = loopWith(() => Promise.resolve({ outcome: 'timeout', behind }));
    await loop.process('ns/a');
    assert.deepEqual(runs, []);
    assert.equal(queue.numRequeues('ns/a'), 1);
    assert.match(
      warnings[0] ?? '',
      /controller widgets: ns\/a not reconciled yet: the cache of configmaps .* retrying with backoff/,
    );
  });

  it('a stand-by cuts the wait: no run, queued again without backoff', async () => {
    const { loop, queue, runs } = loopWith(
      (_key, signal) =>
        new Promise((resolve) => signal.addEventListener('abort', () => resolve({ outcome: 'aborted' }))),
    );
    const processing = loop.process('ns/a');
    loop.abortAll(new LeaseLostError('this replica lost the lease'));
    await processing;
    assert.deepEqual(runs, []);
    assert.equal(queue.numRequeues('ns/a'), 0);
    assert.equal(queue.length, 1);
  });
});
