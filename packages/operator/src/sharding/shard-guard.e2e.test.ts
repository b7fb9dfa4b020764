// Two sharded controllers of one kind, against the real API server: when the leader asks a
// shard to let an object go while one controller is in the middle of reconciling it, the
// other controller's hand-over waits for that reconcile to end, so the new shard never
// reconciles the object while the old one still does.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { KubeObject, Transport } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../client/kinds.js';
import type { Manager } from '../runtime/manager/manager.js';
import { shardedReplica } from '../test-support/sharded-manager.js';
import { HashRing } from './hash-ring.js';
import { objectShardKey } from './shard-key.js';

const RING = 'guarded';
const SHARD_LABEL = `shard.nestor.dev/${RING}`;

let env: TestEnvironment;
let namespace: string;
const replicas = new Map<string, { manager: Manager; transport: Transport }>();
/** Every reconcile of the object, by replica and controller, with its start and end. */
const runs: Array<{ replica: string; controller: string; start: number; end?: number }> = [];
let releaseSlow: () => void = () => {};
const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));

async function startReplica(replica: string): Promise<void> {
  const { manager, transport } = await shardedReplica(env.kubeConfig, { ring: RING, replica, namespace });
  for (const controller of ['slow', 'fast']) {
    manager.addController({
      name: controller,
      resource: ConfigMap,
      namespace,
      labelSelector: 'role=guarded',
      reconcile: async () => {
        const run: (typeof runs)[number] = { replica, controller, start: Date.now() };
        runs.push(run);
        // The first replica's slow controller holds its first reconcile until the test lets it go.
        if (controller === 'slow' && replica === 'shard-a') await slowGate;
        run.end = Date.now();
      },
    });
  }
  await manager.start();
  replicas.set(replica, { manager, transport });
}

async function labelsOf(name: string): Promise<Record<string, string>> {
  const object = await env.client.request<KubeObject>('GET', `/api/v1/namespaces/${namespace}/configmaps/${name}`);
  return object.metadata?.labels ?? {};
}

before(async () => {
  env = await TestEnvironment.start();
  namespace = await env.createNamespace('shard-guard');
});

after(async () => {
  releaseSlow();
  for (const { manager, transport } of replicas.values()) {
    await manager.stop();
    transport.close();
  }
  await env.stop();
});

describe('the shard guard', () => {
  it('a hand-over waits for the reconcile another controller of the kind is running', async () => {
    // An object the ring of two shards puts on the second one.
    const two = new HashRing(['shard-a', 'shard-b']);
    let name = '';
    for (let i = 0; !name; i++) {
      const candidate = `guarded-${i}`;
      if (two.shardFor(objectShardKey({ group: '', kind: 'ConfigMap' }, namespace, candidate)) === 'shard-b')
        name = candidate;
    }
    await startReplica('shard-a');
    await env.client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { role: 'guarded' } },
    });
    await waitFor(() => runs.some((r) => r.replica === 'shard-a' && r.controller === 'slow' && !r.end), {
      what: 'shard-a’s slow controller in the middle of its reconcile',
    });

    await startReplica('shard-b');
    await waitFor(async () => (await labelsOf(name))[`drain.${SHARD_LABEL}`] === 'shard-b', {
      what: 'the leader’s drain request to shard-b',
    });
    // The fast controller sees the drain at once; the slow one is still running: no hand-over.
    await delay(1_500);
    assert.equal((await labelsOf(name))[SHARD_LABEL], 'shard-a', 'handed over while a reconcile still ran');
    assert.ok(!runs.some((r) => r.replica === 'shard-b'), 'shard-b reconciled while shard-a still did');

    releaseSlow();
    await waitFor(async () => (await labelsOf(name))[SHARD_LABEL] === 'shard-b', { what: 'the hand-over to shard-b' });
    await waitFor(() => runs.some((r) => r.replica === 'shard-b'), { what: 'shard-b reconciling the object' });
    const lastOnA = Math.max(...runs.filter((r) => r.replica === 'shard-a').map((r) => r.end ?? Infinity));
    const firstOnB = Math.min(...runs.filter((r) => r.replica === 'shard-b').map((r) => r.start));
    assert.ok(
      lastOnA <= firstOnB,
      `shard-b started at ${firstOnB}, before shard-a's last reconcile ended at ${lastOnA}`,
    );
  });
});
