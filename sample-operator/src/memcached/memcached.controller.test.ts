// The Memcached reconciler unit-tested without an API server: Nest's testing module builds
// the controller as the app does, with @nestor/operator/fake's in-memory KubeClient in place
// of the real one. What needs the API server itself (validation, garbage collection, the
// Deployment controller) is memcached.e2e.test.ts's.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Deployment, KubeClient, resourceOf, TerminalError } from '@nestor/operator';
import { fakeKubeClient, reconcileContext, type FakeKubeClient } from '@nestor/operator/fake';
import type { DeploymentObject } from '../kube-types.js';
import { MEMCACHED_IMAGE, MemcachedController, ROLLOUT_REQUEUE_MS } from './memcached.controller.js';
import { MemcachedModule } from './memcached.module.js';
import { Memcached } from './memcached.resource.js';
import { conditionOf } from './memcached.status.js';

/** Stands in for OperatorModule, which provides KubeClient to every module of the app. */
@Global()
@Module({ providers: [{ provide: KubeClient, useValue: undefined }], exports: [KubeClient] })
class KubeClientModule {}

async function controllerWith(fake: FakeKubeClient): Promise<MemcachedController> {
  const module = await Test.createTestingModule({ imports: [KubeClientModule, MemcachedModule] })
    .overrideProvider(KubeClient)
    .useValue(fake)
    .overrideProvider(MEMCACHED_IMAGE)
    .useValue('memcached:test')
    .compile();
  return module.get(MemcachedController);
}

const ref = { namespace: 'demo', name: 'cache' };
const MemcachedKind = resourceOf(Memcached);

const memcached = (name: string, size: number): Memcached => ({
  apiVersion: 'cache.example.com/v1alpha1',
  kind: 'Memcached',
  metadata: { name, namespace: 'demo' },
  spec: { size, containerPort: 11211 },
});

/** One reconcile, as the runtime runs it: the object as it is now. */
async function reconcile(controller: MemcachedController, fake: FakeKubeClient, name = ref.name) {
  const current = (await fake.get(MemcachedKind, { ...ref, name }))!;
  return controller.reconcile(current, reconcileContext(current, { client: fake }));
}

const read = async (fake: FakeKubeClient, name = ref.name) => (await fake.get(MemcachedKind, { ...ref, name }))!;

describe('MemcachedController against FakeKubeClient', () => {
  it('applies a Deployment it owns, reports the rollout, and stops requeueing once it is available', async () => {
    const fake = fakeKubeClient({ kinds: [Memcached], objects: [memcached('cache', 3)] });
    const controller = await controllerWith(fake);

    assert.deepEqual(await reconcile(controller, fake), { requeueAfter: ROLLOUT_REQUEUE_MS });
    const deployment = (await fake.get(Deployment, ref))!;
    const owner = (await read(fake)).metadata;
    assert.equal(deployment.spec?.replicas, 3);
    assert.equal(deployment.spec?.template.spec?.containers[0]?.image, 'memcached:test');
    assert.deepEqual(
      deployment.metadata?.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]),
      [['Memcached', 'cache', owner.uid, true]],
    );
    assert.deepEqual(
      fake.recordedEvents.map((e) => `${e.type} ${e.reason} ${e.message}`),
      ['Normal Created Created Deployment cache with 3 replicas'],
    );
    let status = (await read(fake)).status!;
    assert.equal(status.observedGeneration, 1);
    assert.equal(conditionOf(await read(fake), 'Progressing')?.status, 'True');
    assert.equal(conditionOf(await read(fake), 'Available')?.status, 'False');

    // What the Deployment controller would do: roll out three available pods.
    await fake.patchStatus(deployment, {
      observedGeneration: deployment.metadata!.generation,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    } satisfies DeploymentObject['status']);
    assert.equal(await reconcile(controller, fake), undefined);
    status = (await read(fake)).status!;
    assert.equal(status.readyReplicas, 3);
    assert.equal(conditionOf(await read(fake), 'Available')?.status, 'True');
    assert.equal(conditionOf(await read(fake), 'Progressing')?.reason, 'RolloutComplete');

    // At rest a reconcile writes nothing that changes anything: no status write, no new versions.
    const before = fake.objects();
    const writes = fake.writes.length;
    assert.equal(await reconcile(controller, fake), undefined);
    assert.deepEqual(fake.objects(), before);
    assert.deepEqual(
      fake.writes.slice(writes).map((a) => a.verb),
      ['apply'],
    );
  });

  it('scales the Deployment when spec.size changes, and says so in an Event', async () => {
    const fake = fakeKubeClient({ kinds: [Memcached], objects: [memcached('cache', 1)] });
    const controller = await controllerWith(fake);
    await reconcile(controller, fake);

    await fake.patch(MemcachedKind, ref, { spec: { size: 4 } });
    assert.equal((await read(fake)).metadata.generation, 2);
    await reconcile(controller, fake);
    assert.equal((await fake.get(Deployment, ref))!.spec?.replicas, 4);
    assert.equal(fake.recordedEvents.at(-1)?.message, 'Scaled Deployment cache: replicas 1 -> 4');
    assert.equal((await read(fake)).status?.observedGeneration, 2);
  });

  it('refuses a Deployment another controller owns: Degraded, and a terminal error', async () => {
    const fake = fakeKubeClient({
      kinds: [Memcached],
      objects: [
        memcached('taken', 2),
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: {
            name: 'taken',
            namespace: 'demo',
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid: 'other', controller: true }],
          },
          spec: { replicas: 1, selector: {}, template: {} },
        } as DeploymentObject,
      ],
    });
    const controller = await controllerWith(fake);
    await assert.rejects(reconcile(controller, fake, 'taken'), TerminalError);
    const degraded = conditionOf(await read(fake, 'taken'), 'Degraded');
    assert.equal(degraded?.status, 'True');
    assert.equal(degraded?.reason, 'DeploymentNotOwned');
    assert.equal((await fake.get(Deployment, { ...ref, name: 'taken' }))!.spec?.replicas, 1, 'not taken over');
  });

  it('records a Warning when finalizing', async () => {
    const fake = fakeKubeClient({ kinds: [Memcached], objects: [memcached('cache', 1)] });
    const controller = await controllerWith(fake);
    const context = reconcileContext(ref, { client: fake });
    await controller.finalize(await read(fake), context);
    assert.equal(fake.recordedEvents[0]?.reason, 'Deleting');
    assert.deepEqual(context.logs, [{ level: 'log', message: 'finalized' }]);
  });
});
