import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock, type KubeObject, type RequestOptions, type Transport } from '@nestor/core';
import { waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import { HttpKubeClient } from '../../client/http-kube-client.js';
import { FakeWatchTransport } from '../../test-support/fake-watch-transport.js';
import { inRun } from '../../test-support/in-run.js';
import { InformerCache } from '../cache/informer-cache.js';
import { Manager, type LeaderElection } from './manager.js';
import { WorkQueue } from '../queue/queue.js';
import { ReconcileLoop } from '../controller/reconcile-loop.js';
import { WriteOutsideRunError } from '../leases/lease-fence.js';
import type { ReconcileRequest } from '../controller/reconciler.js';
import type { ShardingHooks } from '../controller/sharding-hooks.js';
import { inertShardingHooks } from '../../test-support/sharding-hooks.js';

/** A lease whose fence refuses writes while `held` is false. */
function lease(name: string): LeaderElection & { held: boolean } {
  return {
    held: true,
    acquire: () => new Promise(() => {}),
    release: async () => {},
    onLost: () => {},
    assertWritable() {
      if (!this.held) throw new Error(`${name} may have expired`);
    },
  };
}

function shardScope(membership: LeaderElection): ShardingHooks {
  return inertShardingHooks(membership);
}

describe('the write fence of a sharded manager', () => {
  it('checks the leader Lease inside a sharded: false controller, the shard Lease everywhere else', () => {
    const leader = lease('the leader Lease');
    const shard = lease('the shard Lease');
    const manager = new Manager({
      transport: {} as Transport,
      informers: new InformerCache(new FakeWatchTransport()),
      leaderElection: leader,
      sharding: shardScope(shard),
    });
    const reconcile = () => {};
    manager.addController<KubeObject>({ name: 'shards', resource: ConfigMap, reconcile });
    manager.addController<KubeObject>({ name: 'audit', resource: ConfigMap, sharded: false, reconcile });
    const fence = manager.writeFence!;

    leader.held = false; // lost the lead, still holds its shard
    assert.throws(() => inRun('audit', () => fence.assertWritable()), /the leader Lease/);
    inRun('shards', () => fence.assertWritable());
    fence.of(undefined).assertWritable(); // a write of no controller: the shard's Lease

    leader.held = true;
    shard.held = false;
    inRun('audit', () => fence.assertWritable());
    assert.throws(() => inRun('shards', () => fence.assertWritable()), /the shard Lease/);
    assert.throws(() => fence.of(undefined).assertWritable(), /the shard Lease/);
  });
});

/** A transport that answers every request with an empty object and keeps what it was asked. */
function recordingTransport() {
  const sent: Array<{ method: string; path: string; signal?: AbortSignal | undefined }> = [];
  const transport = {
    json: async (method: string, path: string, options: RequestOptions = {}) => {
      sent.push({ method, path, signal: options.signal });
      return {};
    },
  } as unknown as Transport;
  return { transport, sent };
}

const configMap = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'ns', name },
  data: { a: '1' },
});

describe("the manager's client", () => {
  function shardedManager() {
    const leader = lease('the leader Lease');
    const shard = lease('the shard Lease');
    const { transport, sent } = recordingTransport();
    const manager = new Manager({
      transport,
      informers: new InformerCache(new FakeWatchTransport()),
      leaderElection: leader,
      sharding: shardScope(shard),
      events: { clock: new ManualClock(), api: 'events.k8s.io/v1' },
    });
    const reconcile = () => {};
    manager.addController<KubeObject>({ name: 'shards', resource: ConfigMap, reconcile });
    manager.addController<KubeObject>({ name: 'audit', resource: ConfigMap, sharded: false, reconcile });
    return { manager, leader, shard, sent };
  }

  it('is fenced by the same rule on the explicit path, the ambient path and in the Event recorder', async () => {
    const { manager, leader, sent } = shardedManager();
    leader.held = false; // lost the lead, still holds its shard
    const refused = /the leader Lease may have expired/;
    // Explicit: the client scoped to the leader's controller.
    await assert.rejects(manager.client.scoped({ controller: 'audit' }).create(configMap('a')), refused);
    // Ambient: the shared client inside that controller's reconcile.
    await assert.rejects(
      inRun('audit', () => manager.client.create(configMap('b'))),
      refused,
    );
    // The shard's controller and writes outside any controller need the shard Lease, still held.
    await manager.client.scoped({ controller: 'shards' }).create(configMap('c'));
    await inRun('shards', () => manager.client.create(configMap('d')));
    await manager.client.scoped({}).create(configMap('e'));
    // Outside any run, unscoped: which Lease applies is unknown, so the write is refused, not guessed.
    await assert.rejects(manager.client.create(configMap('g')), WriteOutsideRunError);
    assert.deepEqual(
      sent.map((s) => `${s.method} ${s.path}`),
      [
        'POST /api/v1/namespaces/ns/configmaps',
        'POST /api/v1/namespaces/ns/configmaps',
        'POST /api/v1/namespaces/ns/configmaps',
      ],
    );
    // The Event recorder: its Events are fenced by the Lease of the controller that recorded them.
    sent.length = 0;
    const object = { ...configMap('f'), metadata: { namespace: 'ns', name: 'f', uid: 'u' } };
    await manager.client.scoped({ controller: 'audit' }).recordEvent(object, 'Normal', 'Audited', 'seen');
    await manager.client.scoped({ controller: 'shards' }).recordEvent(object, 'Normal', 'Scaled', 'scaled');
    await waitFor(() => manager.events.stats.pending === 0, { what: 'the Events to be written or dropped' });
    assert.equal(manager.events.stats.dropped.fenced, 1);
    assert.deepEqual(
      sent.map((s) => s.path),
      ['/apis/events.k8s.io/v1/namespaces/ns/events'],
    );
  });

  it('is what the Nest layer and a Nest-free program share: no fence without leader election', async () => {
    const { transport, sent } = recordingTransport();
    const manager = new Manager({ transport, informers: new InformerCache(new FakeWatchTransport()) });
    assert.equal(manager.writeFence, undefined);
    await manager.client.create(configMap('a'));
    assert.equal(sent.length, 1);
  });
});

describe('the client a reconcile gets', () => {
  it("is the shared client scoped to the controller and the run's signal, with no ambient context read", async () => {
    const { transport, sent } = recordingTransport();
    const shared = new HttpKubeClient(transport);
    let request: ReconcileRequest<unknown> | undefined;
    const loop = new ReconcileLoop<unknown>({
      name: 'widgets',
      queue: new WorkQueue<string>({ clock: new ManualClock() }),
      reconcile: (r) => void (request = r),
      read: () => undefined,
      log: { debug() {}, info() {}, warn() {}, error() {} },
      client: shared,
    });
    await loop.process('ns/a');
    assert.ok(request?.client);
    assert.notEqual(request.client, shared);
    // Used after its reconcile (a promise left running): its requests still carry the run's signal.
    await request.client.create(configMap('a'));
    assert.equal(sent[0]?.signal, request.signal);
  });
});
