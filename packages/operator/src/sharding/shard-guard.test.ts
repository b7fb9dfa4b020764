import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, silentLogger, type KubeObject, type ResourceDescriptor } from '@nestor/core';
import { ConfigMap as ConfigMapKind } from '../client/kinds.js';
import type { ReconcileRequest } from '../runtime/reconciler.js';
import { ShardGuard } from './shard-guard.js';
import { shardLabels } from './shard-labels.js';

const labels = shardLabels('pool');
const ConfigMap = ConfigMapKind as unknown as ResourceDescriptor<KubeObject>;

/** The API server as the guard uses it: the labels a PATCH writes, the object a GET reads. */
class Api {
  readonly calls: string[] = [];
  live: KubeObject | undefined;
  /** While set, every call waits for it. */
  hold?: Promise<void>;
  json = async <T>(method: string, path: string): Promise<T> => {
    this.calls.push(`${method} ${path}`);
    await this.hold;
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
});
