// Issue 45 against the real API server: an owned kind that no reconcile reads is watched for
// events only (a skeleton per child, and the metric says so), its events still reconcile the
// owner, and the first read of it from the cache makes its informer keep the objects, filled
// before that read returns, with no second watch.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap, createOperator, Secret, silentLogger, type KubeObject, type Operator } from '../runtime-entry.js';

const SUFFIX = randomBytes(3).toString('hex');
const NS = `on-read-${SUFFIX}`;
const CHILDREN = 20;
const READ = 'on-read.nestor.dev/read';

type Cm = KubeObject & { data?: Record<string, string> };

let env: TestEnvironment;
let operator: Operator | undefined;
/** Reconciles of the owner so far, and what the last ones that read found. */
let runs = 0;
const reads: Array<{ one: Cm | undefined; all: Cm[] }> = [];

before(async () => {
  env = await TestEnvironment.start();
  await env.client.request('POST', '/api/v1/namespaces', { metadata: { name: NS } });
  const owner = (await env.client.request('POST', `/api/v1/namespaces/${NS}/secrets`, {
    metadata: { name: 'owner' },
  })) as KubeObject;
  const ownerReferences = [
    { apiVersion: 'v1', kind: 'Secret', name: 'owner', uid: owner.metadata!.uid!, controller: true },
  ];
  for (let i = 0; i < CHILDREN; i++) {
    await env.client.request('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      metadata: { name: `child-${i}`, labels: { app: 'on-read' }, ownerReferences },
      data: { payload: `payload ${i}` },
    });
  }
  operator = await createOperator({
    kubeConfig: env.kubeconfigPath,
    readFlags: false,
    fieldManager: `on-read-${SUFFIX}`,
    metrics: { port: 0 },
    health: { port: 0 },
    logger: () => silentLogger,
  });
  operator.manager.addController<KubeObject>({
    name: `on-read-${SUFFIX}`,
    resource: Secret as never,
    namespace: NS,
    owns: [ConfigMap],
    reconcile: async ({ object, client }) => {
      runs++;
      if (!object?.metadata?.annotations?.[READ]) return;
      // The reconciler reads its children from the cache: as controller-runtime's client does.
      const one = await client!.get<Cm>(ConfigMap as never, { namespace: NS, name: 'child-0' });
      const all = await client!.list<Cm>(ConfigMap as never, { namespace: NS });
      reads.push({ one, all });
    },
  });
  await operator.start();
});

after(async () => {
  await operator?.stop();
  await env.client.request('DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
  await env.stop();
});

const configMaps = () => operator!.manager.informers.all().filter((i) => i.resource.plural === 'configmaps');
const cacheMetric = async () =>
  (await operator!.metrics.registry.getSingleMetricAsString('nestor_cache_objects'))
    .split('\n')
    .filter((line) => line.startsWith('nestor_cache_objects{') && line.includes('resource="configmaps"'));

describe('an owned kind no reconcile reads', () => {
  it('is watched for events only: a skeleton per child, said by the metric', async () => {
    await waitFor(() => runs > 0, { timeoutMs: 30_000, what: 'the owner reconciled' });
    const [informer, ...more] = configMaps();
    assert.equal(more.length, 0, 'one informer of ConfigMaps');
    assert.equal(informer!.mode, 'events');
    assert.equal(informer!.size, CHILDREN);
    const kept = informer!.get(`${NS}/child-1`) as Cm;
    assert.equal(kept.data, undefined, 'no data kept');
    assert.equal(kept.metadata?.ownerReferences?.[0]?.name, 'owner', 'what maps it to its owner is kept');
    assert.deepEqual(await cacheMetric(), [`nestor_cache_objects{resource="configmaps",mode="events"} ${CHILDREN}`]);
  });

  it('still reconciles the owner when a child changes or goes', async () => {
    const before = runs;
    await env.client.request('PATCH', `/api/v1/namespaces/${NS}/configmaps/child-3`, { data: { payload: 'changed' } });
    await waitFor(() => runs > before, { timeoutMs: 30_000, what: 'a reconcile after a child changed' });
    const deleted = runs;
    await env.client.request('DELETE', `/api/v1/namespaces/${NS}/configmaps/child-4`);
    await waitFor(() => runs > deleted, { timeoutMs: 30_000, what: 'a reconcile after a child was deleted' });
    assert.equal(configMaps()[0]!.mode, 'events');
  });

  it('is cached from the first read on: that read waits until every child is in, and gets whole objects', async () => {
    await env.client.request('PATCH', `/api/v1/namespaces/${NS}/secrets/owner`, {
      metadata: { annotations: { [READ]: 'yes' } },
    });
    await waitFor(() => reads.length > 0, { timeoutMs: 30_000, what: 'a reconcile that read its children' });
    const [{ one, all }] = reads as [{ one: Cm | undefined; all: Cm[] }];
    assert.equal(one?.data?.['payload'], 'payload 0', 'the object, whole');
    assert.equal(all.length, CHILDREN - 1, 'every child, none missing: a cache filled before the read returned');
    assert.ok(all.every((child) => child.data?.['payload'] !== undefined));
    assert.equal(all.find((child) => child.metadata?.name === 'child-3')?.data?.['payload'], 'changed');
    const [informer, ...more] = configMaps();
    assert.equal(more.length, 0, 'the same informer keeps the objects now: no second watch');
    assert.equal(informer!.mode, 'objects');
    assert.deepEqual(await cacheMetric(), [
      `nestor_cache_objects{resource="configmaps",mode="objects"} ${CHILDREN - 1}`,
    ]);
  });

  it('serves the next reads from the cache, as new as the events that queued them', async () => {
    const before = reads.length;
    await env.client.request('PATCH', `/api/v1/namespaces/${NS}/configmaps/child-0`, { data: { payload: 'new' } });
    await waitFor(() => reads.slice(before).some((read) => read.one?.data?.['payload'] === 'new'), {
      timeoutMs: 30_000,
      what: 'a reconcile queued by the change that read it',
    });
    const stale = reads.slice(before).filter((read) => read.one?.data?.['payload'] !== 'new');
    assert.deepEqual(stale, [], 'no reconcile queued by the change read an older child');
  });
});
