// The CacheCluster operator against a real kube-apiserver, etcd and kube-controller-manager:
// the app's module runs in Nest's testing module, the API server calls its webhook, and the
// test drives it with plain API calls, waiting on conditions. The pods are never ready (their
// volume claims find no storage provisioner here, and without fake nodes nothing runs them), so
// the test asserts on the objects the operator writes, not on running pods.
// node:test here (this repository's runner); with Vitest, import describe, it, beforeAll and
// afterAll from 'vitest' instead of the aliases below, and leave the rest as it is.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after as afterAll, before as beforeAll, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  type AsWritten,
  type CoreV1Event,
  customResourceDefinition,
  KubeApiError,
  OperatorModule,
  type V1ConfigMap,
  type V1Service,
  type V1StatefulSet,
  webhookConfigurationsOf,
} from '@nestor/operator';
import { TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import { CacheDirectory, type InMemoryCacheDirectory } from './cache-directory.js';
import { CacheClusterModule } from './cache-cluster.module.js';
import { CONFIG_HASH_ANNOTATION } from './cache-cluster.objects.js';
import { CacheCluster } from './cache-cluster.resource.js';
import { CacheClusterWebhook } from './cache-cluster.webhook.js';

let env: TestEnvironment;
let webhooks: LocalWebhooks;
let app: INestApplicationContext;
let directory: InMemoryCacheDirectory;
let ns: string;

const clusters = (name = '') => `/apis/cache.example.com/v1alpha1/namespaces/${ns}/cacheclusters/${name}`;
const get = <T>(path: string) => env.client.request<T>('GET', path);
const create = (name: string, spec: AsWritten<CacheCluster['spec']> = {}) =>
  env.client.request<CacheCluster>('POST', clusters(), {
    apiVersion: 'cache.example.com/v1alpha1',
    kind: 'CacheCluster',
    metadata: { name },
    spec,
  } satisfies AsWritten<CacheCluster>);
const patchSpec = (name: string, spec: AsWritten<CacheCluster['spec']>) =>
  env.client.request<CacheCluster>('PATCH', clusters(name), { spec }, 'application/merge-patch+json');
const statefulSet = (name: string) => get<V1StatefulSet>(`/apis/apps/v1/namespaces/${ns}/statefulsets/${name}`);
const configOf = async (name: string) =>
  (await get<V1ConfigMap>(`/api/v1/namespaces/${ns}/configmaps/${name}-config`)).data?.['redis.conf'] ?? '';
const eventsOf = async (name: string) =>
  (await get<{ items: CoreV1Event[] }>(`/api/v1/namespaces/${ns}/events`)).items.filter(
    (e) => e.involvedObject.kind === 'CacheCluster' && e.involvedObject.name === name,
  );

/** The CacheCluster once its status describes its current generation and `check` holds. */
function settled(name: string, check: (cluster: CacheCluster) => boolean, what: string) {
  return waitFor(
    async () => {
      const cluster = await get<CacheCluster>(clusters(name));
      return cluster.status?.observedGeneration === cluster.metadata.generation && check(cluster) && cluster;
    },
    { timeoutMs: 30_000, what },
  );
}
const condition = (cluster: CacheCluster, type: string) => cluster.status?.conditions?.find((c) => c.type === type);

/** How the API server refused a call; fails the test if it was admitted. */
async function refusal(call: Promise<unknown>): Promise<KubeApiError> {
  const error = await call.then(
    () => assert.fail('the API server admitted the request'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof KubeApiError, String(error));
  return error;
}

beforeAll(async () => {
  env = await TestEnvironment.start({ crds: [customResourceDefinition(CacheCluster)] });
  ns = await env.createNamespace('cache-cluster');
  // The control plane is shared by every test file: the webhook sees this file's namespace only.
  const configurations = webhookConfigurationsOf([CacheClusterWebhook], {
    name: `cache-cluster-${randomBytes(3).toString('hex')}`,
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
  });
  webhooks = await env.installWebhooks({ configurations }); // URLs on 127.0.0.1, a CA made for the run

  const moduleRef = await Test.createTestingModule({
    imports: [
      OperatorModule.forRoot({
        kubeConfig: env.kubeConfig,
        namespace: ns, // also the operator's own namespace here (no POD_NAMESPACE): where backups live
        metrics: { port: 0 }, // several operators run at once: no servers on fixed ports
        health: { port: 0 },
        webhooks: { host: webhooks.host, port: webhooks.port, certDir: webhooks.certDir },
      }),
      CacheClusterModule,
    ],
  }).compile();
  app = await moduleRef.init();
  directory = app.get(CacheDirectory) as InMemoryCacheDirectory;

  // The API server loads webhook configurations asynchronously: wait until it calls this one,
  // with a dry run that the webhook denies (a name taken in the directory) and that stores nothing.
  await directory.register({ name: 'probe', namespace: 'elsewhere', uid: 'probe', endpoint: 'x', replicas: 1 });
  const probe = {
    apiVersion: 'cache.example.com/v1alpha1',
    kind: 'CacheCluster',
    metadata: { name: 'probe' },
    spec: {},
  };
  await waitFor(
    () =>
      env.client.request('POST', `${clusters()}?dryRun=All`, probe).then(
        () => false,
        (error: unknown) => error instanceof KubeApiError && error.detail.includes('cache directory'),
      ),
    { timeoutMs: 30_000, what: 'the API server to call the CacheCluster webhook' },
  );
});

afterAll(async () => {
  // Delete what is left while the operator runs, so its finalizer is not left behind.
  const left = await get<{ items: CacheCluster[] }>(clusters()).catch(() => ({ items: [] }));
  await Promise.all(left.items.map((c) => env.client.raw('DELETE', clusters(c.metadata.name))));
  await waitFor(async () => (await get<{ items: unknown[] }>(clusters())).items.length === 0, {
    timeoutMs: 30_000,
    what: 'the CacheClusters to be deleted',
  }).catch(() => undefined);
  await webhooks?.uninstall();
  await app?.close();
  await env?.stop();
});

describe('CacheCluster operator', () => {
  it('fills the defaults and makes the StatefulSet, with its volume claim template, the headless Service and the ConfigMap', async () => {
    const created = await create('sessions');
    assert.deepEqual(created.spec, {
      replicas: 3,
      image: 'redis:7.4-alpine',
      storage: '1Gi',
      maxMemory: '256Mi',
      evictionPolicy: 'allkeys-lru',
      paused: false,
    });

    const cluster = await settled('sessions', (c) => c.status?.configHash !== undefined, 'the status to be written');
    // The StatefulSet controller makes the pods; none becomes ready (no storage for the claims).
    assert.equal(condition(cluster, 'Ready')?.reason, 'WaitingForReplicas');
    assert.equal(cluster.status?.endpoint, `sessions.${ns}.svc:6379`);

    const sts = await statefulSet('sessions');
    assert.equal(sts.spec?.replicas, 3);
    assert.equal(sts.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage, '1Gi');
    assert.equal(sts.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION], cluster.status?.configHash);
    const owner = sts.metadata?.ownerReferences?.[0];
    assert.deepEqual([owner?.kind, owner?.uid, owner?.controller], ['CacheCluster', created.metadata.uid, true]);
    const service = await get<V1Service>(`/api/v1/namespaces/${ns}/services/sessions`);
    assert.equal(service.spec?.clusterIP, 'None');
    assert.match(await configOf('sessions'), /^maxmemory 268435456$/m);

    assert.equal(directory.entries.get('sessions')?.uid, created.metadata.uid);
    await waitFor(async () => (await eventsOf('sessions')).some((e) => e.reason === 'Created'), {
      what: 'a Created Event',
    });
  });

  it('rolls the pods when the configuration changes: a new hash in the pod template', async () => {
    await create('rolling');
    const first = await settled('rolling', (c) => c.status?.configHash !== undefined, 'the first status');
    await patchSpec('rolling', { maxMemory: '512Mi', evictionPolicy: 'allkeys-lfu' });
    const second = await settled('rolling', (c) => c.status?.configHash !== first.status?.configHash, 'a new hash');
    const sts = await statefulSet('rolling');
    assert.equal(sts.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION], second.status?.configHash);
    assert.match(await configOf('rolling'), /^maxmemory 536870912\nmaxmemory-policy allkeys-lfu$/m);
    await waitFor(async () => (await eventsOf('rolling')).some((e) => e.reason === 'ConfigChanged'), {
      what: 'a ConfigChanged Event',
    });
  });

  it('follows the backups ConfigMap in the operator’s namespace', async () => {
    await create('backed-up');
    await settled('backed-up', (c) => c.status?.configHash !== undefined, 'the first status');
    const backups = `/api/v1/namespaces/${ns}/configmaps`;
    await env.client.request('POST', backups, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'backups' },
      data: { [`${ns}.backed-up`]: '900 1' },
    });
    await waitFor(async () => (await configOf('backed-up')).includes('save "900 1"'), {
      what: 'the snapshot rule in the configuration',
    });
    // Taken out of the ConfigMap: the mapper remembers it named the cluster before.
    await env.client.request('PUT', `${backups}/backups`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'backups' },
      data: {},
    });
    await waitFor(async () => (await configOf('backed-up')).includes('save ""'), {
      what: 'the snapshots to stop',
    });
  });

  it('changes nothing while paused, and applies the changes when resumed', async () => {
    await create('paused', { replicas: 2 });
    await settled('paused', (c) => c.status?.configHash !== undefined, 'the first status');
    await patchSpec('paused', { paused: true, replicas: 4 });
    const paused = await settled('paused', (c) => condition(c, 'Paused')?.status === 'True', 'Paused=True');
    assert.equal(condition(paused, 'Paused')?.reason, 'SpecPaused');
    assert.equal((await statefulSet('paused')).spec?.replicas, 2);

    await patchSpec('paused', { paused: false });
    await waitFor(async () => (await statefulSet('paused')).spec?.replicas === 4, {
      what: 'the StatefulSet scaled to 4',
    });
  });

  it('refuses what the schema and the webhook refuse', async () => {
    // The schema: a quantity's pattern.
    const badSize = await refusal(create('bad-size', { storage: '1GB' }));
    assert.equal(badSize.status, 422);
    assert.match(badSize.detail, /spec\.storage/);

    // The webhook: a name the directory has for another namespace.
    await directory.register({ name: 'taken', namespace: 'billing', uid: 'x', endpoint: 'x', replicas: 1 });
    const taken = await refusal(create('taken'));
    assert.equal(taken.status, 409);
    assert.match(taken.detail, /already has a cache named taken, in namespace billing/);

    // The webhook: spec.storage compared as a quantity.
    await create('sized', { storage: '1Gi' });
    assert.equal((await patchSpec('sized', { storage: '1024Mi' })).spec.storage, '1024Mi', 'the same size');
    const resized = await refusal(patchSpec('sized', { storage: '2Gi' }));
    assert.equal(resized.status, 422);
    assert.match(resized.detail, /spec\.storage cannot change \(1024Mi -> 2Gi\)/);
  });

  it('removes the directory entry before the CacheCluster goes', async () => {
    const created = await create('short-lived');
    await waitFor(async () => directory.entries.get('short-lived')?.uid === created.metadata.uid, {
      what: 'the directory entry',
    });
    await env.client.request('DELETE', clusters('short-lived'));
    await waitFor(async () => (await env.client.raw('GET', clusters('short-lived'))).status === 404, {
      what: 'the CacheCluster to be gone',
    });
    assert.equal(directory.entries.has('short-lived'), false);
    await waitFor(async () => (await eventsOf('short-lived')).some((e) => e.reason === 'Deregistered'), {
      what: 'a Deregistered Event',
    });
  });
});
