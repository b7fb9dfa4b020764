// The CacheCluster reconciler without an API server: Nest's testing module builds the
// controller with @nestor/operator/fake's in-memory KubeClient and the in-memory directory.
// What needs the API server itself (defaults, validation, the webhook, the StatefulSet
// controller, garbage collection) is cache-cluster.e2e.test.ts's.
// node:test here (this repository's runner); with Vitest, import describe and it from 'vitest'.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Test } from '@nestjs/testing';
import { ConfigMap, resourceOf, Service, StatefulSet, TerminalError, type KubeObject } from '@nestor/operator';
import { fakeKubeClient, reconcileContext, type FakeKubeClient } from '@nestor/operator/fake';
import { CacheDirectory, InMemoryCacheDirectory } from './cache-directory.js';
import { CacheClusterController } from './cache-cluster.controller.js';
import { CONFIG_HASH_ANNOTATION } from './cache-cluster.objects.js';
import { CacheCluster, type CacheClusterSpec } from './cache-cluster.resource.js';

const Kind = resourceOf(CacheCluster);
const ref = { namespace: 'shop', name: 'sessions' };

/** A CacheCluster as the API server returns it: the fake applies no defaults, so all are here. */
function cacheCluster(spec: Partial<CacheClusterSpec> = {}, name = ref.name): CacheCluster {
  return {
    apiVersion: 'cache.example.com/v1alpha1',
    kind: 'CacheCluster',
    metadata: { name, namespace: ref.namespace },
    spec: {
      replicas: 3,
      image: 'redis:7.4-alpine',
      storage: '1Gi',
      maxMemory: '256Mi',
      evictionPolicy: 'allkeys-lru',
      paused: false,
      ...spec,
    },
  };
}

async function setUp(...objects: KubeObject[]) {
  const fake = fakeKubeClient({ kinds: [CacheCluster], objects });
  const directory = new InMemoryCacheDirectory();
  const module = await Test.createTestingModule({
    providers: [CacheClusterController, { provide: CacheDirectory, useValue: directory }],
  }).compile();
  const controller = module.get(CacheClusterController);
  /** One reconcile, as the runtime runs it: with the object as it is now. */
  const reconcile = async (name = ref.name) => {
    const current = (await fake.get(Kind, { ...ref, name }))!;
    return controller.reconcile(current, reconcileContext(current, { client: fake }));
  };
  const read = async (name = ref.name) => (await fake.get(Kind, { ...ref, name }))!;
  return { fake, directory, controller, reconcile, read };
}

/** The backups ConfigMap delivered to the controller's mapper, as its watch would. */
function delivered(
  controller: CacheClusterController,
  type: 'added' | 'updated' | 'deleted',
  data: Record<string, string>,
) {
  const backups = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'backups', namespace: 'cache-system' },
    data,
  };
  return controller.backupsChanged(backups, { type, object: backups });
}
const condition = (cluster: CacheCluster, type: string) => cluster.status?.conditions?.find((c) => c.type === type);
const events = (fake: FakeKubeClient) => fake.recordedEvents.map((e) => `${e.reason}: ${e.message}`);
const configOf = async (fake: FakeKubeClient) =>
  (await fake.get(ConfigMap, { ...ref, name: `${ref.name}-config` }))?.data?.['redis.conf'];

describe('CacheClusterController', () => {
  it('applies a ConfigMap, a headless Service and a StatefulSet with a volume claim template, all owned', async () => {
    const { fake, directory, reconcile, read } = await setUp(cacheCluster());
    await reconcile();
    const cluster = await read();

    const statefulSet = (await fake.get(StatefulSet, ref))!;
    assert.equal(statefulSet.spec?.replicas, 3);
    assert.equal(statefulSet.spec?.serviceName, 'sessions');
    assert.deepEqual(statefulSet.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests, { storage: '1Gi' });
    assert.equal(
      statefulSet.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION],
      cluster.status?.configHash,
    );
    const service = (await fake.get(Service, ref))!;
    assert.equal(service.spec?.clusterIP, 'None');
    assert.match((await configOf(fake))!, /^maxmemory 268435456$/m);
    assert.match((await configOf(fake))!, /^save ""$/m);
    for (const owned of [statefulSet, service, (await fake.get(ConfigMap, { ...ref, name: 'sessions-config' }))!]) {
      assert.deepEqual(
        owned.metadata?.ownerReferences?.map((o) => [o.kind, o.uid, o.controller]),
        [['CacheCluster', cluster.metadata.uid, true]],
      );
    }

    assert.deepEqual(directory.entries.get('sessions'), {
      name: 'sessions',
      namespace: 'shop',
      uid: cluster.metadata.uid,
      endpoint: 'sessions.shop.svc:6379',
      replicas: 3,
    });
    assert.equal(condition(cluster, 'Ready')?.reason, 'WaitingForReplicas');
    assert.equal(condition(cluster, 'Paused')?.status, 'False');
    assert.equal(cluster.status?.observedGeneration, cluster.metadata.generation);
    assert.deepEqual(events(fake), ['Created: Created StatefulSet sessions with 3 replicas']);
  });

  it('is Ready once the StatefulSet runs every replica on the current revision, and then writes nothing more', async () => {
    const { fake, reconcile, read } = await setUp(cacheCluster());
    await reconcile();
    const statefulSet = (await fake.get(StatefulSet, ref))!;
    // What the StatefulSet controller and the kubelets would report.
    await fake.patchStatus(statefulSet, {
      observedGeneration: statefulSet.metadata?.generation,
      replicas: 3,
      readyReplicas: 3,
      updatedReplicas: 3,
      currentRevision: 'r1',
      updateRevision: 'r1',
    });
    await reconcile();
    const ready = await read();
    assert.equal(condition(ready, 'Ready')?.status, 'True');
    assert.equal(ready.status?.readyReplicas, 3);

    const before = fake.objects();
    await reconcile();
    assert.deepEqual(fake.objects(), before, 'at rest a reconcile changes nothing');
  });

  it('rolls the pods when the configuration changes: a new hash in the pod template, and an Event', async () => {
    const { fake, reconcile, read } = await setUp(cacheCluster());
    await reconcile();
    const firstHash = (await read()).status?.configHash;

    await fake.patch(Kind, ref, { spec: { maxMemory: '512Mi' } });
    await reconcile();
    const secondHash = (await read()).status?.configHash;
    assert.notEqual(secondHash, firstHash);
    const template = (await fake.get(StatefulSet, ref))!.spec?.template;
    assert.equal(template?.metadata?.annotations?.[CONFIG_HASH_ANNOTATION], secondHash);
    assert.match((await configOf(fake))!, /^maxmemory 536870912$/m);
    assert.equal(
      events(fake).at(-1),
      `ConfigChanged: Configuration changed (${firstHash} -> ${secondHash}): rolling the pods`,
    );
  });

  it('takes the snapshot rule the backups ConfigMap has for the cluster, once the watch delivered it', async () => {
    const { fake, controller, reconcile } = await setUp(cacheCluster());
    await reconcile();
    assert.match((await configOf(fake))!, /^save ""$/m);

    // What the runtime does when the ConfigMap appears: the mapper, then the reconciles it asks for.
    assert.deepEqual(delivered(controller, 'added', { 'shop.sessions': '900 1' }), [ref]);
    await reconcile();
    assert.match((await configOf(fake))!, /^save "900 1"$/m);

    // A value that is not a rule is not written into the configuration file.
    delivered(controller, 'updated', { 'shop.sessions': '900 1"\nrequirepass x' });
    await reconcile();
    assert.match((await configOf(fake))!, /^save ""$/m);
    assert.doesNotMatch((await configOf(fake))!, /requirepass/);
    assert.ok(events(fake).some((e) => /^InvalidBackupRule: the backups ConfigMap has .* not a snapshot rule/.test(e)));
  });

  it('maps the backups ConfigMap to the clusters it names and named before', async () => {
    const { controller } = await setUp();
    assert.deepEqual(delivered(controller, 'added', { 'shop.sessions': '900 1' }), [
      { namespace: 'shop', name: 'sessions' },
    ]);
    assert.deepEqual(delivered(controller, 'updated', { 'shop.carts': '60 1' }), [
      { namespace: 'shop', name: 'sessions' }, // taken out: reconciled once more, to stop its snapshots
      { namespace: 'shop', name: 'carts' },
    ]);
    assert.deepEqual(delivered(controller, 'updated', { 'no-dot': '1 1' }), [{ namespace: 'shop', name: 'carts' }]);
    assert.deepEqual(delivered(controller, 'updated', { 'shop.carts': '60 1' }), [
      { namespace: 'shop', name: 'carts' },
    ]);
    assert.deepEqual(delivered(controller, 'deleted', { 'shop.carts': '60 1' }), [
      { namespace: 'shop', name: 'carts' },
    ]);
    assert.deepEqual(delivered(controller, 'added', {}), []);
  });

  it('leaves everything as it is while paused, says so, and applies the changes when resumed', async () => {
    const { fake, reconcile, read } = await setUp(cacheCluster());
    await reconcile();
    await fake.patch(Kind, ref, { spec: { paused: true, replicas: 5 } });
    const writes = fake.writes.length;
    await reconcile();
    assert.deepEqual(
      fake.writes.slice(writes).map((w) => `${w.verb} ${w.resource}${w.subresource ? `/${w.subresource}` : ''}`),
      ['event events', 'patch cacheclusters.cache.example.com/status'],
      'an Event and its status, nothing else',
    );
    let cluster = await read();
    assert.equal(condition(cluster, 'Paused')?.status, 'True');
    assert.equal(cluster.status?.observedGeneration, cluster.metadata.generation);
    assert.equal((await fake.get(StatefulSet, ref))!.spec?.replicas, 3);

    await fake.patch(Kind, ref, { spec: { paused: false } });
    await reconcile();
    cluster = await read();
    assert.equal(condition(cluster, 'Paused')?.status, 'False');
    assert.equal((await fake.get(StatefulSet, ref))!.spec?.replicas, 5);
    assert.deepEqual(events(fake).slice(1), [
      'Paused: Paused: changes are not applied',
      'Resumed: Resumed: changes are applied again',
      'Scaled: Scaled from 3 to 5 replicas',
    ]);
  });

  it('refuses a name the directory gives another cluster: Ready=False, NameTaken, not retried', async () => {
    const { directory, reconcile, read } = await setUp(cacheCluster());
    await directory.register({ name: 'sessions', namespace: 'billing', uid: 'other', endpoint: 'x', replicas: 1 });
    await assert.rejects(reconcile(), TerminalError);
    const ready = condition(await read(), 'Ready');
    assert.equal(ready?.reason, 'NameTaken');
    assert.match(ready?.message ?? '', /already has sessions for namespace billing/);
  });

  it('removes the directory entry when finalizing, and keeps the object while the directory fails', async () => {
    const { fake, directory, controller, reconcile, read } = await setUp(cacheCluster());
    await reconcile();
    const cluster = await read();

    directory.failure = new Error('directory unreachable');
    await assert.rejects(controller.deregister(cluster, reconcileContext(cluster, { client: fake })), /unreachable/);
    assert.ok(directory.entries.has('sessions'), 'a throw: the framework keeps the finalizer and retries');

    directory.failure = undefined;
    await controller.deregister(cluster, reconcileContext(cluster, { client: fake }));
    assert.equal(directory.entries.has('sessions'), false);
    assert.equal(events(fake).at(-1), 'Deregistered: Removed sessions from the cache directory');
  });
});
