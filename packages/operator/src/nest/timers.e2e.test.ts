// Per-object timers (`@Timer`), against the real API server: a timer runs periodically on
// each object of the kind, never at the same time as the object's reconcile, keeps running
// after it throws, and stops once the object is deleted.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap, Controller, Reconcile, Timer, type KubeObject } from '../index.js';
import { configMapsPath, createConfigMap, patchConfigMap } from '../test-support/e2e-helpers.js';
import { bootOperatorApp } from '../test-support/operator-app.js';

const INTERVAL_MS = 100;

/** Per object: runs now in progress (reconcile or timer), the most ever at once, timer runs. */
const objects = new Map<string, { running: number; most: number; ticks: number; reconciles: number }>();
const of = (object: KubeObject) => {
  const key = `${object.metadata?.namespace}/${object.metadata?.name}`;
  let entry = objects.get(key);
  if (!entry) objects.set(key, (entry = { running: 0, most: 0, ticks: 0, reconciles: 0 }));
  return entry;
};

async function exclusive(object: KubeObject, ms: number, count: 'ticks' | 'reconciles'): Promise<void> {
  const entry = of(object);
  entry.running++;
  entry.most = Math.max(entry.most, entry.running);
  try {
    await sleep(ms);
    entry[count]++;
  } finally {
    entry.running--;
  }
}

@Controller(ConfigMap, { maxConcurrentReconciles: 4 })
class Heartbeat {
  @Reconcile()
  async reconcile(object: KubeObject): Promise<void> {
    // Long enough that timer runs fall due while it is running.
    await exclusive(object, 3 * INTERVAL_MS, 'reconciles');
  }

  @Timer({ intervalMs: INTERVAL_MS, initialDelayMs: 0 })
  async beat(object: KubeObject): Promise<void> {
    await exclusive(object, 20, 'ticks');
    if (object.metadata?.name === 'flaky' && of(object).ticks % 2 === 1) throw new Error('flaky timer');
  }
}

let env: TestEnvironment;
let app: INestApplicationContext;
let namespace: string;

before(async () => {
  env = await TestEnvironment.start();
  namespace = await env.createNamespace('timers');
  await createConfigMap(env.client, namespace, 'steady');
  await createConfigMap(env.client, namespace, 'flaky');
  app = await bootOperatorApp({ kubeConfig: env.kubeConfig, namespace, providers: [Heartbeat] });
});

after(async () => {
  await app?.close();
  await env.stop();
});

describe('@Timer', () => {
  it('runs on each object, again and again, and a throw does not stop it', async () => {
    await waitFor(() => (objects.get(`${namespace}/steady`)?.ticks ?? 0) >= 5, { timeoutMs: 20_000, what: 'ticks' });
    await waitFor(() => (objects.get(`${namespace}/flaky`)?.ticks ?? 0) >= 5, {
      timeoutMs: 20_000,
      what: 'the flaky timer going on after its throws',
    });
  });

  it('never runs while the object’s reconcile runs', async () => {
    const steady = objects.get(`${namespace}/steady`)!;
    const reconcilesBefore = steady.reconciles;
    for (let i = 0; i < 3; i++) {
      await patchConfigMap(env.client, namespace, 'steady', { data: { round: String(i) } });
      await waitFor(() => steady.reconciles > reconcilesBefore + i, { timeoutMs: 20_000, what: `reconcile ${i + 1}` });
    }
    const ticks = steady.ticks;
    await waitFor(() => steady.ticks > ticks + 3, { timeoutMs: 20_000, what: 'ticks after the reconciles' });
    assert.equal(steady.most, 1, 'a timer run and a reconcile of one object overlapped');
  });

  it('stops when the object is deleted', async () => {
    await env.client.request('DELETE', configMapsPath(namespace, 'steady'));
    const steady = objects.get(`${namespace}/steady`)!;
    // A run due before the deletion reached the cache may still happen; then none.
    let last = -1;
    await waitFor(
      async () => {
        const settled = steady.ticks === last && steady.running === 0;
        last = steady.ticks;
        await sleep(5 * INTERVAL_MS);
        return settled;
      },
      { timeoutMs: 20_000, what: 'no more ticks after the deletion' },
    );
    const flaky = objects.get(`${namespace}/flaky`)!.ticks;
    await waitFor(() => objects.get(`${namespace}/flaky`)!.ticks > flaky + 3, {
      timeoutMs: 20_000,
      what: 'the other object’s timer still running',
    });
    assert.equal(steady.ticks, last, 'the deleted object’s timer ran again');
  });
});
