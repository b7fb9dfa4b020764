// End-to-end tests of the Memcached operator against a real API server, with
// kube-controller-manager (Deployments get ReplicaSets and Pods), kube-scheduler and fake
// nodes that kwok runs (the Pods are placed, go Running and Ready): the operator runs in a
// Nest testing module, the test drives it with plain API calls and waits on conditions.
// The CRD serves v1alpha1 and v1beta1, converted by MemcachedConversion in an app of its own
// that lives as long as the file: the garbage collector reads the kind at its preferred
// version (v1beta1), and changing a CRD's conversion restarts its storage, failing requests
// in flight, so the conversion is set up once, first, and taken down last.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  CONVERSION_DATA_ANNOTATION,
  OperatorModule,
  customResourceDefinition,
  defaultFinalizerName,
  resourceOf,
} from '@nestor/operator';
import { TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import type { DeploymentObject, EventObject, PodObject } from '../kube-types.js';
import { MemcachedConversion } from './memcached.conversion.js';
import { MemcachedModule } from './memcached.module.js';
import { MemcachedV1beta1 } from './memcached-v1beta1.resource.js';
import { Memcached } from './memcached.resource.js';
import { conditionOf } from './memcached.status.js';

let env: TestEnvironment;
let webhooks: LocalWebhooks;
let converter: INestApplicationContext | undefined;

before(async () => {
  const crd = customResourceDefinition(Memcached, MemcachedV1beta1);
  // The shared control plane's fake nodes (NESTOR_TEST_NODES): the Deployment's pods run there.
  env = await TestEnvironment.start({ crds: [crd], nodes: 3 });
  webhooks = await env.installWebhooks({ conversions: [crd] });
  converter = await Test.createTestingModule({
    imports: [
      OperatorModule.forRoot({
        kubeConfig: env.kubeConfig,
        metrics: { port: 0 },
        health: { port: 0 },
        webhooks: { host: webhooks.host, port: webhooks.port, certDir: webhooks.certDir },
      }),
    ],
    providers: [MemcachedConversion],
  })
    .compile()
    .then((moduleRef) => moduleRef.init());
  // The API server takes up the conversion asynchronously. Until then (None) a v1beta1 object
  // is only relabelled, and pruned to v1alpha1's schema: replicas would vanish.
  const ns = await env.createNamespace('memcached-conversion-probe');
  await waitFor(
    async () =>
      (
        await env.client.request<MemcachedV1beta1>('POST', `${memcacheds(ns, '', 'v1beta1')}?dryRun=All`, {
          apiVersion: 'cache.example.com/v1beta1',
          kind: 'Memcached',
          metadata: { name: 'probe' },
          spec: { replicas: 2 },
        })
      ).spec.replicas === 2,
    { timeoutMs: 30_000, what: 'the API server to convert Memcacheds through the webhook' },
  );
});
after(async () => {
  await webhooks?.uninstall();
  await converter?.close();
  await env.stop();
});

/** Starts the operator on one namespace. */
async function startOperator(namespace: string): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      OperatorModule.forRoot({
        kubeConfig: env.kubeConfig,
        namespace,
        // Tests run many operators at once: no metrics or probe servers on fixed ports.
        metrics: { port: 0 },
        health: { port: 0 },
        webhooks: { port: 0 }, // the file's converter app serves the conversion
      }),
      MemcachedModule,
    ],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

const memcacheds = (ns: string, name = '', version = 'v1alpha1') =>
  `/apis/cache.example.com/${version}/namespaces/${ns}/memcacheds/${name}`;
const deployments = (ns: string, name = '') => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;

const createMemcached = (ns: string, name: string, spec: Partial<Memcached['spec']>) =>
  env.client.request<Memcached>('POST', memcacheds(ns), {
    apiVersion: 'cache.example.com/v1alpha1',
    kind: 'Memcached',
    metadata: { name },
    spec,
  });
const patchSpec = (ns: string, name: string, spec: Partial<Memcached['spec']>) =>
  env.client.request('PATCH', memcacheds(ns, name), { spec }, 'application/merge-patch+json');
const getMemcached = (ns: string, name: string) => env.client.request<Memcached>('GET', memcacheds(ns, name));
const getDeployment = (ns: string, name: string) =>
  env.client.request<DeploymentObject>('GET', deployments(ns, name)).catch(() => undefined);
const events = async (ns: string, name: string) =>
  (await env.client.request<{ items: EventObject[] }>('GET', `/api/v1/namespaces/${ns}/events`)).items.filter(
    (e) => e.involvedObject.kind === 'Memcached' && e.involvedObject.name === name,
  );

/** The Memcached once its status describes its current generation with these condition statuses. */
function settled(ns: string, name: string, wanted: Record<string, 'True' | 'False'>, what: string) {
  return waitFor(
    async () => {
      const m = await getMemcached(ns, name);
      const current = m.status?.observedGeneration === m.metadata.generation;
      const matches = Object.entries(wanted).every(([type, status]) => {
        const c = conditionOf(m, type as never);
        return c?.status === status && c.observedGeneration === m.metadata.generation;
      });
      return current && matches && m;
    },
    { what },
  );
}

describe('Memcached operator', () => {
  let ns: string;
  let app: INestApplicationContext;
  before(async () => {
    ns = await env.createNamespace('memcached');
    app = await startOperator(ns);
  });
  after(() => app.close());

  it('creates a Deployment of spec.size replicas, owned by the Memcached, and reports it Available', async () => {
    const created = await createMemcached(ns, 'cache-a', { size: 2 });
    assert.equal(created.spec.containerPort, 11211, 'the CRD defaults containerPort');

    const deployment = await waitFor(() => getDeployment(ns, 'cache-a'), { what: 'the Deployment' });
    assert.equal(deployment.spec?.replicas, 2);
    const container = deployment.spec?.template.spec?.containers[0];
    assert.equal(container?.ports?.[0]?.containerPort, 11211);
    const owner = deployment.metadata?.ownerReferences?.[0];
    assert.deepEqual(
      { kind: owner?.kind, name: owner?.name, uid: owner?.uid, controller: owner?.controller },
      { kind: 'Memcached', name: 'cache-a', uid: created.metadata.uid, controller: true },
    );

    const ready = await settled(
      ns,
      'cache-a',
      { Available: 'True', Progressing: 'False', Degraded: 'False' },
      'cache-a to be Available with its rollout complete',
    );
    assert.equal(ready.status?.readyReplicas, 2);
    assert.equal(ready.status?.observedGeneration, 1);
    assert.equal(conditionOf(ready, 'Progressing')?.reason, 'RolloutComplete');
    assert.ok(ready.metadata.finalizers?.includes(defaultFinalizerName(resourceOf(Memcached))));
    await waitFor(async () => (await events(ns, 'cache-a')).some((e) => e.reason === 'Created'), {
      what: 'a Created event',
    });
  });

  it('scales the Deployment up when spec.size grows, and reports the new generation', async () => {
    await createMemcached(ns, 'cache-b', { size: 1 });
    await settled(ns, 'cache-b', { Available: 'True', Progressing: 'False' }, 'cache-b to be rolled out');

    await patchSpec(ns, 'cache-b', { size: 3 });
    await waitFor(async () => (await getDeployment(ns, 'cache-b'))?.spec?.replicas === 3, {
      what: 'the Deployment to be scaled to 3',
    });
    const scaled = await settled(ns, 'cache-b', { Available: 'True', Progressing: 'False' }, 'the scale-up');
    assert.equal(scaled.status?.observedGeneration, 2);
    assert.equal(scaled.status?.readyReplicas, 3);
    // Events are written in the background (best effort): wait for it.
    const scaledEvent = await waitFor(async () => (await events(ns, 'cache-b')).find((e) => e.reason === 'Scaled'), {
      what: 'a Scaled event',
    });
    assert.match(scaledEvent.message ?? '', /replicas 1 -> 3/);
  });

  it('rolls out a new containerPort', async () => {
    await createMemcached(ns, 'cache-c', { size: 1 });
    await settled(ns, 'cache-c', { Available: 'True', Progressing: 'False' }, 'cache-c to be rolled out');
    await patchSpec(ns, 'cache-c', { containerPort: 11311 });
    await waitFor(
      async () =>
        (await getDeployment(ns, 'cache-c'))?.spec?.template.spec?.containers[0]?.ports?.[0]?.containerPort === 11311,
      { what: 'the Deployment to use port 11311' },
    );
    await settled(ns, 'cache-c', { Available: 'True', Progressing: 'False' }, 'the new port to be rolled out');
  });

  it('sets the Deployment back when someone else changes it', async () => {
    await createMemcached(ns, 'cache-d', { size: 2 });
    await waitFor(() => getDeployment(ns, 'cache-d'), { what: 'the Deployment' });
    await env.client.request(
      'PATCH',
      deployments(ns, 'cache-d'),
      { spec: { replicas: 7 } },
      'application/merge-patch+json',
    );
    await waitFor(async () => (await getDeployment(ns, 'cache-d'))?.spec?.replicas === 2, {
      what: 'the Deployment to be set back to 2 replicas',
    });
  });

  it('runs the finalizer on delete: records an Event, then the Memcached and its Deployment go', async () => {
    await createMemcached(ns, 'cache-e', { size: 1 });
    await settled(ns, 'cache-e', { Available: 'True' }, 'cache-e to be Available');

    await env.client.request('DELETE', memcacheds(ns, 'cache-e'));
    await waitFor(async () => (await env.client.raw('GET', memcacheds(ns, 'cache-e'))).status === 404, {
      what: 'cache-e to be gone',
    });
    const deleting = await waitFor(async () => (await events(ns, 'cache-e')).find((e) => e.reason === 'Deleting'), {
      what: 'the Deleting event',
    });
    assert.equal(deleting.type, 'Warning');
    assert.equal(deleting.message, `Custom Resource cache-e is being deleted from the namespace ${ns}`);
    // The garbage collector deletes what the Memcached owned.
    await waitFor(async () => (await getDeployment(ns, 'cache-e')) === undefined, {
      what: 'the garbage collector to delete the Deployment',
      timeoutMs: 60_000, // it may take up to 30 s to notice a newly installed kind
    });
  });

  it('refuses a Deployment it does not own, with Degraded=True and no retries', async () => {
    const other = await env.client.request<{ metadata: { uid: string } }>(
      'POST',
      `/api/v1/namespaces/${ns}/configmaps`,
      {
        metadata: { name: 'someone-else' },
      },
    );
    await env.client.request('POST', deployments(ns), {
      metadata: {
        name: 'cache-f',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'someone-else', uid: other.metadata.uid, controller: true },
        ],
      },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'other' } },
        template: { metadata: { labels: { app: 'other' } }, spec: { containers: [{ name: 'c', image: 'other' }] } },
      },
    });
    await createMemcached(ns, 'cache-f', { size: 1 });
    const refused = await settled(ns, 'cache-f', { Degraded: 'True' }, 'cache-f to be Degraded');
    assert.equal(conditionOf(refused, 'Degraded')?.reason, 'DeploymentNotOwned');
    assert.match(conditionOf(refused, 'Degraded')?.message ?? '', /controlled by ConfigMap someone-else/);
    assert.equal((await getDeployment(ns, 'cache-f'))?.spec?.replicas, 0, 'the Deployment is left alone');
  });

  it('rejects a size outside 1..10 (the CRD schema from @Field)', async () => {
    for (const size of [0, 11]) {
      await assert.rejects(createMemcached(ns, `bad-${size}`, { size }), /spec\.size/);
    }
  });
});

describe('Memcached operator without ready pods', () => {
  it('reports Progressing and not Available while no node can take its pods', async () => {
    const ns = await env.createNamespace('memcached-pending');
    // The namespace's default CPU request is more than any node has: the scheduler places no pod.
    await env.client.request('POST', `/api/v1/namespaces/${ns}/limitranges`, {
      metadata: { name: 'too-big' },
      spec: { limits: [{ type: 'Container', default: { cpu: '64' }, defaultRequest: { cpu: '64' } }] },
    });
    const app = await startOperator(ns);
    try {
      await createMemcached(ns, 'stuck', { size: 2 });
      const stuck = await settled(
        ns,
        'stuck',
        { Available: 'False', Progressing: 'True', Degraded: 'False' },
        'stuck to report its rollout in progress',
      );
      assert.equal(conditionOf(stuck, 'Available')?.reason, 'NoReplicasAvailable');
      assert.equal(conditionOf(stuck, 'Progressing')?.reason, 'RollingOut');
      assert.equal(stuck.status?.readyReplicas, 0);
      // The scheduler tried, and found no node with room.
      await waitFor(
        async () => {
          const { items } = await env.client.request<{ items: PodObject[] }>('GET', `/api/v1/namespaces/${ns}/pods`);
          const unschedulable = (pod: PodObject) =>
            pod.status?.phase === 'Pending' &&
            pod.status.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable');
          return items.length === 2 && items.every(unschedulable);
        },
        { what: 'both pods Pending, unschedulable' },
      );
    } finally {
      await app.close();
    }
  });
});

describe('Memcached v1beta1, converted by the webhook', () => {
  let ns: string;
  let app: INestApplicationContext;
  before(async () => {
    ns = await env.createNamespace('memcached-v1beta1');
    app = await startOperator(ns);
  });
  after(() => app.close());

  it('is reconciled when written as v1beta1, and reads back with replicas and the status', async () => {
    const created = await env.client.request<MemcachedV1beta1>('POST', memcacheds(ns, '', 'v1beta1'), {
      apiVersion: 'cache.example.com/v1beta1',
      kind: 'Memcached',
      metadata: { name: 'beta' },
      spec: { replicas: 2 },
    });
    assert.deepEqual(created.spec, { replicas: 2 });
    assert.deepEqual((await getMemcached(ns, 'beta')).spec, { size: 2, containerPort: 11211 }, 'stored as v1alpha1');
    await waitFor(async () => (await getDeployment(ns, 'beta'))?.spec?.replicas === 2, {
      what: 'the controller to make a Deployment of 2 replicas',
    });
    const read = await waitFor(
      async () => {
        const m = await env.client.request<MemcachedV1beta1>('GET', memcacheds(ns, 'beta', 'v1beta1'));
        return m.status?.observedGeneration === m.metadata.generation && m;
      },
      { what: 'the status, read as v1beta1' },
    );
    assert.ok(read.status?.conditions?.some((c) => c.type === 'Available'));
  });

  it('keeps the port v1beta1 cannot hold when scaled through v1beta1', async () => {
    await createMemcached(ns, 'alpha', { size: 1, containerPort: 11311 });
    const beta = await env.client.request<MemcachedV1beta1>('GET', memcacheds(ns, 'alpha', 'v1beta1'));
    assert.deepEqual(beta.spec, { replicas: 1 });
    assert.deepEqual(JSON.parse(beta.metadata.annotations![CONVERSION_DATA_ANNOTATION]!), {
      spec: { containerPort: 11311 },
    });
    // As `kubectl patch` would: the API server converts the live object, patches, converts back.
    await env.client.request(
      'PATCH',
      memcacheds(ns, 'alpha', 'v1beta1'),
      { spec: { replicas: 3 } },
      'application/merge-patch+json',
    );
    assert.deepEqual((await getMemcached(ns, 'alpha')).spec, { size: 3, containerPort: 11311 });
    await waitFor(
      async () => {
        const d = await getDeployment(ns, 'alpha');
        return d?.spec?.replicas === 3 && d.spec.template.spec?.containers[0]?.ports?.[0]?.containerPort === 11311;
      },
      { what: 'the Deployment scaled to 3 on port 11311' },
    );
  });
});
