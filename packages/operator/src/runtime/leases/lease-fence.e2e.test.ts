// The write fence against a real API server, one test per path a write takes: the client a
// reconcile gets (explicit), the manager's shared client used from a nested helper (ambient),
// and the Event recorder. Each time a reconcile outlives its Lease (another replica took the
// Lease over while it ran, as after a partition) and tries a write it made fine while
// leading: the fence refuses it, and the object is left as the leader wrote it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap, V1Lease } from '../../client/kinds.js';
import { KubeApiError, Transport, type KubeObject } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import { OperatorMetrics } from '../../metrics/operator-metrics.js';
import { configMapsPath, createConfigMap } from '../../test-support/e2e-helpers.js';
import { parseMetrics, valueOf } from '../../test-support/prometheus.js';
import { shardedReplica } from '../../test-support/sharded-manager.js';
import { LeaseLock, LeaseLostError, microTime } from './leader-election.js';
import { Manager } from '../manager/manager.js';
import type { ReconcileRequest } from '../controller/reconciler.js';

let env: TestEnvironment;
let transport: Transport;
before(async () => {
  env = await TestEnvironment.start();
  transport = await Transport.fromKubeConfig(env.kubeConfig);
});
after(async () => {
  transport?.close();
  await env?.stop();
});

const LEASE = 'fenced-operator';
const leasePath = (namespace: string, name = LEASE) =>
  `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`;

/**
 * Another replica takes the Lease over (as after a partition): the holder's next renewal sees
 * it. The holder renews every 200 ms, so a renewal may land between the read and the write:
 * the takeover reads again then, as a replica would (a loaded machine made it a 409 once).
 */
async function usurp(namespace: string, name = LEASE): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const held = await env.client.request<V1Lease>('GET', leasePath(namespace, name));
    try {
      await env.client.request('PUT', leasePath(namespace, name), {
        ...held,
        spec: { ...held.spec, holderIdentity: 'usurper', renewTime: microTime(new Date()) },
      });
      return;
    } catch (error) {
      if (!(error instanceof KubeApiError && error.status === 409) || attempt >= 10) throw error;
    }
  }
}

/** One write of a path: `phase` is 'leading' while the Lease is held, 'stale' once it is lost. */
type Write = (manager: Manager, request: ReconcileRequest<KubeObject>, phase: 'leading' | 'stale') => Promise<void>;

/**
 * Runs a leader whose first reconcile writes with `write` while leading, waits until the
 * Lease is taken over, and writes again. Returns what the stale write threw (or 'written').
 */
async function staleWrite(name: string, write: Write) {
  const namespace = await env.createNamespace(name);
  const lock = new LeaseLock(transport, {
    name: LEASE,
    namespace,
    identity: 'stale-leader',
    leaseDurationMs: 4000,
    renewDeadlineMs: 3000,
    retryPeriodMs: 200,
  });
  const manager = new Manager({ transport, leaderElection: lock, shutdownGraceMs: 5000 });
  let leadingWrite: 'pending' | 'done' = 'pending';
  let stale: unknown;
  let runs = 0;
  manager.addController({
    name: 'stale-writer',
    resource: ConfigMap,
    namespace,
    reconcile: async (request) => {
      if (++runs > 1) return; // only the first run outlives the Lease
      await write(manager, request, 'leading');
      leadingWrite = 'done';
      // A reconcile that ignores its aborted signal and writes on after the Lease is gone.
      await waitFor(() => !manager.isLeader, { timeoutMs: 20_000, what: 'the Lease to be taken over' });
      stale = await write(manager, request, 'stale').then(
        () => 'written',
        (error: unknown) => error,
      );
    },
  });
  await manager.start();
  try {
    await waitFor(() => manager.isLeader, { what: 'the lead' });
    await createConfigMap(env.client, namespace, 'target', { data: { phase: 'created' } });
    await waitFor(() => leadingWrite === 'done', { what: 'the write made while leading' });
    await usurp(namespace);
    await waitFor(() => stale !== undefined, { timeoutMs: 20_000, what: 'the stale write to be tried' });
    const object = await env.client.request<V1ConfigMap>('GET', configMapsPath(namespace, 'target'));
    return { namespace, manager, stale, object };
  } finally {
    await manager.stop();
  }
}

const refused = /does not hold the lease .* this write is refused/;
const patchPhase = (phase: string) => ({ data: { phase } });

describe('a stale write after the Lease is lost', () => {
  it('is refused on the explicit path: the client the reconcile got (request.client)', async () => {
    const { stale, object } = await staleWrite('fence-explicit', async (_manager, request, phase) => {
      await request.client.patch(ConfigMap, request.ref, patchPhase(phase));
    });
    assert.match(String(stale), refused);
    assert.equal(object.data?.['phase'], 'leading', 'the write made while leading landed, the stale one did not');
  });

  it("is refused on the ambient path: the manager's shared client in a user's nested helper", async () => {
    // A helper that knows nothing of the reconcile: the fence reads whose write it is from the context.
    const mark = (manager: Manager, ref: { namespace?: string; name: string }, phase: string) =>
      manager.client.patch(ConfigMap, ref, patchPhase(phase));
    const { stale, object } = await staleWrite('fence-ambient', async (manager, request, phase) => {
      await mark(manager, { namespace: request.ref.namespace!, name: request.ref.name }, phase);
    });
    assert.match(String(stale), refused);
    assert.equal(object.data?.['phase'], 'leading');
  });

  it('is dropped by the Event recorder: an Event recorded after the loss is never written', async () => {
    const { namespace, manager } = await staleWrite('fence-events', async (manager, request, phase) => {
      await request.client.recordEvent(request.object!, 'Normal', phase === 'leading' ? 'Leading' : 'Stale', phase);
      // The Event is written in the background: the leader's lands before the Lease is taken over.
      if (phase === 'leading') {
        await waitFor(() => manager.events.stats.created === 1, { what: "the leader's Event to be written" });
      } else {
        await waitFor(() => manager.events.stats.dropped.fenced === 1, { what: 'the stale Event to be fenced' });
      }
    });
    const events = await env.client.request<{ items: Array<{ reason: string }> }>(
      'GET',
      `/apis/events.k8s.io/v1/namespaces/${namespace}/events`,
    );
    assert.deepEqual(
      events.items.map((e) => e.reason),
      ['Leading'],
    );
    assert.equal(manager.events.stats.dropped.fenced, 1);
  });
});

describe('a sharded replica that lost its shard Lease but still leads', () => {
  it("refuses the sharded controller's stale writes, explicit and ambient, and lets the leader's controller write", async () => {
    const namespace = await env.createNamespace('fence-shard');
    const { manager, transport: own } = await shardedReplica(env.kubeConfig, {
      ring: 'fence',
      replica: 'fence-a',
      namespace,
    });
    const shardFenceRefuses = () => {
      try {
        manager.writeFence!.of('shards').assertWritable();
        return false;
      } catch {
        return true;
      }
    };
    let outcome: { explicit: unknown; ambient: unknown; leader: unknown } | undefined;
    let leadingWrite = false;
    let runs = 0;
    const settle = (write: Promise<unknown>) =>
      write.then(
        () => 'written',
        (error: unknown) => error,
      );
    manager.addController({
      name: 'shards',
      resource: ConfigMap,
      namespace,
      reconcile: async ({ ref, client }) => {
        if (++runs > 1) return;
        await client.patch(ConfigMap, ref, patchPhase('leading'));
        leadingWrite = true;
        await waitFor(shardFenceRefuses, { timeoutMs: 20_000, what: 'the shard Lease to be taken over' });
        outcome = {
          explicit: await settle(client.patch(ConfigMap, ref, patchPhase('stale'))),
          ambient: await settle(manager.client.patch(ConfigMap, ref, patchPhase('stale'))),
          // The leader's controller writes under the leader Lease, still held.
          leader: await settle(
            manager.client.scoped({ controller: 'audit' }).patch(ConfigMap, ref, { data: { audited: 'yes' } }),
          ),
        };
      },
    });
    manager.addController({ name: 'audit', resource: ConfigMap, namespace, sharded: false, reconcile: () => {} });
    await manager.start();
    try {
      await waitFor(() => manager.isLeader, { what: 'the lead' });
      await createConfigMap(env.client, namespace, 'target', { data: { phase: 'created' } });
      await waitFor(() => leadingWrite, { timeoutMs: 20_000, what: 'the write made while holding the shard' });
      await usurp(namespace, 'fence-a');
      await waitFor(() => outcome !== undefined, { timeoutMs: 20_000, what: 'the stale writes to be tried' });
      assert.ok(manager.isLeader, 'the replica still leads');
      assert.match(String(outcome!.explicit), refused);
      assert.match(String(outcome!.ambient), refused);
      assert.equal(outcome!.leader, 'written');
      const object = await env.client.request<V1ConfigMap>('GET', configMapsPath(namespace, 'target'));
      assert.deepEqual(object.data, { phase: 'leading', audited: 'yes' });
    } finally {
      await manager.stop();
      own.close();
    }
  });
});

describe('a reconcile whose write the fence refuses', () => {
  it('ends as its own outcome: counted as fenced, not as an error, and not retried', async () => {
    const namespace = await env.createNamespace('fence-outcome');
    const lock = new LeaseLock(transport, {
      name: LEASE,
      namespace,
      identity: 'fenced-leader',
      leaseDurationMs: 4000,
      renewDeadlineMs: 3000,
      retryPeriodMs: 200,
    });
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const manager = new Manager({ transport, leaderElection: lock, metrics, shutdownGraceMs: 5000 });
    const controller = 'fenced-writer';
    let thrown: unknown;
    let runs = 0;
    manager.addController({
      name: controller,
      resource: ConfigMap,
      namespace,
      reconcile: async ({ ref, client }) => {
        if (++runs > 1) return;
        await client.patch(ConfigMap, ref, patchPhase('leading'));
        // The run outlives the Lease and writes on: the fence refuses, and the reconciler lets the error go.
        await waitFor(() => !manager.isLeader, { timeoutMs: 20_000, what: 'the Lease to be taken over' });
        try {
          await client.patch(ConfigMap, ref, patchPhase('stale'));
        } catch (error) {
          thrown = error;
          throw error;
        }
      },
    });
    const sample = async (name: string) => valueOf(parseMetrics(await metrics.scrape()), name, { controller });
    await manager.start();
    try {
      await waitFor(() => manager.isLeader, { what: 'the lead' });
      await createConfigMap(env.client, namespace, 'target', { data: { phase: 'created' } });
      await waitFor(() => runs === 1, { what: 'the first reconcile' });
      await usurp(namespace);
      await waitFor(async () => (await sample('nestor_reconcile_fenced_total')) === 1, {
        timeoutMs: 20_000,
        what: 'the fenced reconcile to be counted',
      });
      assert.ok(thrown instanceof LeaseLostError, `the write was refused by the fence: ${String(thrown)}`);
      assert.equal(await sample('controller_runtime_reconcile_errors_total'), 0, 'not an error');
      assert.equal(await sample('workqueue_retries_total'), 0, 'no retry with backoff');
      assert.equal(await sample('nestor_reconcile_retries_exhausted_total'), 0);
      assert.equal(manager.getController(controller)!.queue.numRequeues(`${namespace}/target`), 0);
      const object = await env.client.request<V1ConfigMap>('GET', configMapsPath(namespace, 'target'));
      assert.equal(object.data?.['phase'], 'leading', 'the stale write never landed');
    } finally {
      await manager.stop();
    }
  });
});
