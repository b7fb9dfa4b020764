import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, silentLogger, type KubeObject, type ResourceDescriptor } from '@nestor/core';
import { ConfigMap as ConfigMapKind } from '../client/kinds.js';
import { FakeKubeClient } from '../fake/fake-kube-client.js';
import type { ReconcileRequest } from '../runtime/controller/reconciler.js';
import { ShardGuard } from './shard-guard.js';
import { shardLabels } from './shard-labels.js';

const labels = shardLabels('pool');
const ConfigMap = ConfigMapKind as unknown as ResourceDescriptor<KubeObject>;

/** The API server as the guard uses it: the labels a PATCH writes, the object a GET reads. */
class Api {
  readonly calls: string[] = [];
  /** The labels each PATCH wrote, in order: `path shard-label-value`. */
  readonly relabels: string[] = [];
  /** Paths whose PATCH answers 409 (the object changed). */
  readonly conflicts = new Set<string>();
  live: KubeObject | undefined;
  /** While set, every call waits for it. */
  hold?: Promise<void>;
  json = async <T>(method: string, path: string, options?: { body?: unknown }): Promise<T> => {
    this.calls.push(`${method} ${path}`);
    await this.hold;
    if (method === 'PATCH') {
      const body = options?.body as { metadata?: { labels?: Record<string, string | null> } } | undefined;
      if (this.conflicts.has(path)) throw new KubeApiError(409, 'Conflict', 'changed', 'PATCH', path);
      this.relabels.push(`${path} ${body?.metadata?.labels?.[labels.shard]}`);
    }
    if (method === 'GET') {
      if (!this.live) throw new KubeApiError(404, 'NotFound', 'not found', 'GET', path);
      return this.live as T;
    }
    return {} as T;
  };
}

function object(shard: string | undefined, drain?: string, resourceVersion = '1'): KubeObject {
  return {
    metadata: {
      namespace: 'ns',
      name: 'o',
      resourceVersion,
      labels: { ...(shard ? { [labels.shard]: shard } : {}), ...(drain ? { [labels.drain]: drain } : {}) },
    },
  };
}

function request(object: KubeObject | undefined): ReconcileRequest<KubeObject> {
  return {
    ref: { namespace: 'ns', name: 'o' },
    key: 'ns/o',
    object,
    signal: new AbortController().signal,
    attempt: 1,
    reconcileId: 'r',
    log: silentLogger,
    client: new FakeKubeClient(),
    cluster: 'default',
  };
}

function guarded(api: Api, lease = { held: true }) {
  const guard = new ShardGuard({
    transport: api,
    labels,
    shardId: 'a',
    assertWritable: () => {
      if (!lease.held) throw new Error('the shard Lease may have expired');
    },
  });
  const ran: string[] = [];
  const reconcile = guard.reconciler(ConfigMap, ({ object }) => {
    ran.push(`reconcile ${object?.metadata?.resourceVersion}`);
  });
  return { guard, ran, reconcile };
}

describe('ShardGuard', () => {
  it('reconciles its own objects, and leaves alone those labelled for another shard', async () => {
    const api = new Api();
    const { ran, reconcile } = guarded(api);
    await reconcile(request(object('a')));
    await reconcile(request(object('b')));
    assert.deepEqual(ran, ['reconcile 1']);
    assert.deepEqual(api.calls, []);
  });

  it('starts no run while the shard is not sure of its Lease, and asks for the key again', async () => {
    const api = new Api();
    const lease = { held: false };
    const { guard, ran, reconcile } = guarded(api, lease);
    assert.deepEqual(await reconcile(request(object('a'))), { requeueAfter: 1_000 });
    const fired: string[] = [];
    await guard
      .timer(ConfigMap, { name: 't', intervalMs: 1_000, run: () => void fired.push('t') })
      .run(request(object('a')));
    assert.deepEqual([ran, fired], [[], []]);
    lease.held = true;
    await reconcile(request(object('a')));
    assert.deepEqual(ran, ['reconcile 1']);
  });

  it('hands over on a drain request, after any other run of the object on the shard ends', async () => {
    const api = new Api();
    const { guard, ran, reconcile } = guarded(api);
    let release!: () => void;
    const other = guard.reconciler(ConfigMap, () => new Promise<void>((resolve) => (release = resolve)));
    const running = other(request(object('a')));
    await new Promise(setImmediate);
    assert.equal(guard.runningOf(ConfigMap, object('a')), 1);
    assert.deepEqual(await reconcile(request(object('a', 'b'))), { requeueAfter: 100 });
    assert.deepEqual(api.calls, [], 'no hand-over while the other controller runs');
    release();
    await running;
    assert.equal(await reconcile(request(object('a', 'b'))), undefined);
    assert.deepEqual(api.calls, ['PATCH /api/v1/namespaces/ns/configmaps/o']);
    assert.deepEqual(ran, [], 'a drain request is handed over, not reconciled');
  });

  it('starts no run while the hand-over write is in flight, and counts a run from before its first await', async () => {
    const api = new Api();
    const { guard, ran, reconcile } = guarded(api);
    let release!: () => void;
    api.hold = new Promise((resolve) => (release = resolve));
    // The hand-over's PATCH is on the wire: another controller's run, or a timer, must wait.
    const handing = reconcile(request(object('a', 'b')));
    await new Promise(setImmediate);
    const other = guard.reconciler(ConfigMap, () => void ran.push('other'));
    assert.deepEqual(await other(request(object('a'))), { requeueAfter: 100 });
    const fired: string[] = [];
    await guard
      .timer(ConfigMap, { name: 't', intervalMs: 1_000, run: () => void fired.push('t') })
      .run(request(object('a')));
    assert.deepEqual([ran, fired], [[], []]);
    release();
    await handing;
    api.hold = undefined;

    // After a lost Lease a run first reads the object: it is counted while that read is on the wire.
    const api2 = new Api();
    const guard2 = new ShardGuard({ transport: api2, labels, shardId: 'a', assertWritable: () => {} });
    guard2.suspect();
    let release2!: () => void;
    api2.hold = new Promise((resolve) => (release2 = resolve));
    api2.live = object('a');
    const running = guard2.reconciler(ConfigMap, () => {})(request(object('a')));
    assert.equal(guard2.runningOf(ConfigMap, object('a')), 1, 'counted before its read returns');
    assert.deepEqual(await guard2.reconciler(ConfigMap, () => {})(request(object('a', 'b'))), { requeueAfter: 100 });
    release2();
    await running;
  });

  it('after a hand-over, checks a cached copy from before it with the API server', async () => {
    const api = new Api();
    const { ran, reconcile } = guarded(api);
    await reconcile(request(object('a', 'b')));
    // A lagging informer still holds the copy from before the drain.
    api.live = object('b', undefined, '3');
    await reconcile(request(object('a', undefined, '1')));
    assert.deepEqual(ran, [], 'the object is shard b’s now');
    assert.equal(api.calls.at(-1), 'GET /api/v1/namespaces/ns/configmaps/o');
    // Assigned back to this shard later: it runs again, and is no longer checked.
    api.live = object('a', undefined, '7');
    await reconcile(request(object('a', undefined, '7')));
    await reconcile(request(object('a', undefined, '8')));
    assert.deepEqual(ran, ['reconcile 7', 'reconcile 8']);
    assert.equal(api.calls.filter((c) => c.startsWith('GET')).length, 2);
  });

  it('after a lost Lease, confirms each object once with the API server before running it', async () => {
    const api = new Api();
    const { guard, ran, reconcile } = guarded(api);
    guard.suspect();
    api.live = object('b', undefined, '5'); // moved away by the leader while the Lease was lost
    await reconcile(request(object('a', undefined, '2')));
    assert.deepEqual(ran, []);
    api.live = object('a', undefined, '6'); // this one is still the shard's
    await reconcile(request(object('a', undefined, '6')));
    await reconcile(request(object('a', undefined, '7')));
    assert.deepEqual(ran, ['reconcile 6', 'reconcile 7']);
    assert.equal(api.calls.filter((c) => c.startsWith('GET')).length, 2, 'confirmed once, then the cache is trusted');
  });

  it('runs a timer only on this shard’s objects, never during a drain, and counts it as a run', async () => {
    const api = new Api();
    const { guard } = guarded(api);
    const fired: string[] = [];
    let release!: () => void;
    const timer = guard.timer(ConfigMap, {
      name: 'probe',
      intervalMs: 1_000,
      run: ({ object }) => {
        fired.push(object!.metadata!.labels![labels.shard]!);
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    await timer.run(request(object('b')));
    await timer.run(request(object('a', 'b')));
    assert.deepEqual(fired, []);
    const running = timer.run(request(object('a')));
    await new Promise(setImmediate);
    assert.deepEqual(fired, ['a']);
    assert.equal(guard.runningOf(ConfigMap, object('a')), 1, 'a hand-over would wait for it');
    release();
    await running;
    assert.equal(guard.runningOf(ConfigMap, object('a')), 0);
  });

  describe('children', () => {
    const Secret = {
      group: '',
      version: 'v1',
      kind: 'Secret',
      plural: 'secrets',
      namespaced: true,
    } as ResourceDescriptor;
    const owner = () => ({ ...object('a', 'b'), metadata: { ...object('a', 'b').metadata, uid: 'u-o' } });
    const child = (name: string, shard = 'a'): KubeObject => ({
      metadata: {
        namespace: 'ns',
        name,
        resourceVersion: '7',
        labels: { [labels.shard]: shard },
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u-o', controller: true }],
      },
    });

    it('moves the children inside the hand-over, before their owner', async () => {
      const api = new Api();
      const { guard, ran, reconcile } = guarded(api);
      guard.children = (kind, o) => {
        assert.equal(kind, ConfigMap);
        assert.equal(o.metadata?.uid, 'u-o');
        return ['c1', 'c2', 'c3'].map((name) => ({ resource: Secret, object: child(name) }));
      };
      await reconcile(request(owner()));
      assert.deepEqual(ran, [], 'a drain request is handed over, not reconciled');
      assert.equal(api.relabels.length, 4);
      assert.deepEqual(
        api.relabels.slice(0, 3).sort(),
        ['c1', 'c2', 'c3'].map((name) => `/api/v1/namespaces/ns/secrets/${name} b`),
      );
      assert.equal(api.relabels[3], '/api/v1/namespaces/ns/configmaps/o b', 'the owner last');
    });

    it('keeps the owner when a child changed under its relabel, and asks for the key again', async () => {
      const api = new Api();
      const { guard, reconcile } = guarded(api);
      guard.children = () => [{ resource: Secret, object: child('c1') }];
      api.conflicts.add('/api/v1/namespaces/ns/secrets/c1');
      const result = await reconcile(request(owner()));
      assert.ok(result && 'requeueAfter' in result && result.requeueAfter! > 0);
      assert.deepEqual(api.relabels, [], 'the owner stays until its children moved');
      api.conflicts.clear();
      await reconcile(request(owner()));
      assert.deepEqual(api.relabels, ['/api/v1/namespaces/ns/secrets/c1 b', '/api/v1/namespaces/ns/configmaps/o b']);
    });

    it('a child this shard wrote, seen only after its owner was handed over, follows it; others stay', async () => {
      const api = new Api();
      const { guard, reconcile } = guarded(api);
      for (const name of ['early', 'late', 'stranger']) guard.childWritten(Secret, child(name));
      guard.childSeen(ConfigMap, Secret, child('early'));
      assert.deepEqual(api.relabels, [], 'its owner is still here: it stays');
      await reconcile(request(owner()));
      api.relabels.length = 0;
      guard.childSeen(ConfigMap, Secret, child('late'));
      // Moved back here (with its owner, by the leader): not written by this shard, it stays.
      guard.childSeen(ConfigMap, Secret, child('back'));
      guard.childSeen(ConfigMap, Secret, child('early'));
      const stranger = child('stranger');
      stranger.metadata!.ownerReferences![0]!.name = 'other';
      guard.childSeen(ConfigMap, Secret, stranger);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(api.relabels, ['/api/v1/namespaces/ns/secrets/late b']);
      guard.childSeen(ConfigMap, Secret, child('late'));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(api.relabels.length, 1, 'once');
    });
  });
});
