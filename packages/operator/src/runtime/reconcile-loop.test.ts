import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock, type RuntimeLogger } from '@nestor/core';
import { ManagedController } from './managed-controller.js';
import { WorkQueue } from './queue.js';
import { ReconcileLoop, type ReconcileOutcome } from './reconcile-loop.js';
import type { ReconcileResult } from './result.js';

/** Runs one reconcile that returns `result` and says how it ended and what the queue does next. */
async function runOnce(result: unknown) {
  const clock = new ManualClock();
  const queue = new WorkQueue<string>({ clock });
  const errors: string[] = [];
  const log: RuntimeLogger = { debug() {}, info() {}, warn() {}, error: (message) => errors.push(message) };
  let outcome: ReconcileOutcome | undefined;
  const loop = new ReconcileLoop<unknown>({
    name: 'widgets',
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
          ...base,
          sources: [{ name: 's', stream: undefined as never }],
          reconcileTimeoutMs: -5,
        }),
      /controller widgets: reconcileTimeoutMs must be a number of milliseconds greater than 0, got -5/,
    );
  });
});
