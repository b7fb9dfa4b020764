// Issue 45 in a fleet: a member cluster's cache keeps each kind as the operator's own does.
// The module's `cache` settings apply to the members' informers (they were built without
// them: `keep: 'objects'` kept skeletons there), the metric names the member's kinds by
// cluster, and a read through `fleet.client(name)` makes the member keep a kind it watched
// for events only, as a read in the operator's own cluster does. The management cluster is
// the shared control plane; the member is one of its own.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TestEnvironment, waitFor } from '@nestor/testing';
import {
  ConfigMap,
  createOperator,
  Secret,
  ServiceAccount,
  silentLogger,
  type KubeObject,
  type Operator,
} from '../runtime-entry.js';
import { StaticClusters } from '../runtime/fleet/index.js';

const SUFFIX = randomBytes(3).toString('hex');
const NS = `fleet-cache-${SUFFIX}`;
const APPS = 'apps';
const CHILDREN = 5;
const COUNT = 'fleet-cache.nestor.dev/count';

let management: TestEnvironment;
let member: TestEnvironment;
let operator: Operator | undefined;
/** What the cluster-aware controller read from the member, each time it was asked to. */
const counted: KubeObject[][] = [];

before(async () => {
  [management, member] = await Promise.all([
    TestEnvironment.start(),
    TestEnvironment.start({ useExistingCluster: false }),
  ]);
  await management.client.request('POST', '/api/v1/namespaces', { metadata: { name: NS } });
  await management.client.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: 'census' } });
  await member.client.request('POST', '/api/v1/namespaces', { metadata: { name: APPS } });
  const owner = await member.client.request<KubeObject>('POST', `/api/v1/namespaces/${APPS}/secrets`, {
    metadata: { name: 'owner' },
  });
  const ownerReferences = [
    { apiVersion: 'v1', kind: 'Secret', name: 'owner', uid: owner.metadata!.uid!, controller: true },
  ];
  for (let i = 0; i < CHILDREN; i++) {
    await member.client.request('POST', `/api/v1/namespaces/${APPS}/configmaps`, {
      metadata: { name: `child-${i}`, ownerReferences },
      data: { payload: `payload ${i}` },
    });
    await member.client.request('POST', `/api/v1/namespaces/${APPS}/serviceaccounts`, {
      metadata: { name: `account-${i}`, labels: { app: 'fleet-cache' } },
    });
  }
  operator = await createOperator({
    kubeConfig: management.kubeconfigPath,
    readFlags: false,
    fieldManager: `fleet-cache-${SUFFIX}`,
    metrics: { port: 0 },
    health: { port: 0 },
    logger: () => silentLogger,
    cache: { byKind: [{ kind: ConfigMap, keep: 'objects' }] },
    fleet: {
      providers: [
        new StaticClusters({
          kubeConfig: member.kubeconfigPath,
          contexts: { east: member.kubeConfig.getCurrentContext() },
        }),
      ],
    },
  });
  const fleet = operator.fleet;
  // In each member: Secrets owning ConfigMaps (kept whole: cache.byKind says so).
  operator.manager.addController<KubeObject>({
    name: `owners-${SUFFIX}`,
    resource: Secret as never,
    namespace: APPS,
    clusters: 'members',
    owns: [ConfigMap],
    reconcile: async () => {},
  });
  // In the operator's cluster: the census, queued by ServiceAccounts of the members (left to
  // the default: a skeleton each), reading them through fleet.client when annotated.
  operator.manager.addController<KubeObject>({
    name: `census-${SUFFIX}`,
    resource: ConfigMap as never,
    namespace: NS,
    watches: [
      {
        resource: ServiceAccount as never,
        namespace: APPS,
        clusters: 'members',
        map: () => ({ namespace: NS, name: 'census' }),
      },
    ],
    reconcile: async ({ object }) => {
      if (!object?.metadata?.annotations?.[COUNT]) return;
      counted.push(await fleet.client('east')!.list<KubeObject>(ServiceAccount as never, { namespace: APPS }));
    },
  });
  await operator.start();
});

after(async () => {
  await operator?.stop();
  await management.client.request('DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
  await Promise.all([management?.stop(), member?.stop()]);
});

/** The member's informers of a kind. */
const inMember = (plural: string) =>
  operator!.fleet
    .get('east')!
    .informers.all()
    .filter((i) => i.resource.plural === plural);

const memberMetric = async () =>
  (await operator!.metrics.registry.getSingleMetricAsString('nestor_cache_objects'))
    .split('\n')
    .filter((line) => line.includes('cluster="east"'))
    .sort();

describe("a member cluster's cache", () => {
  it("keeps each kind as the operator's cache settings say, and the metric names the cluster", async () => {
    await waitFor(() => operator!.fleet.names.includes('east') && inMember('serviceaccounts')[0]?.synced, {
      timeoutMs: 60_000,
      what: 'the member engaged, its ServiceAccounts watched',
    });
    const [children, ...more] = inMember('configmaps');
    assert.equal(more.length, 0, 'one informer of ConfigMaps in the member');
    assert.equal(children!.mode, 'objects', "cache.byKind's keep: 'objects' holds in the member");
    assert.equal(
      (children!.get(`${APPS}/child-1`) as { data?: Record<string, string> }).data?.['payload'],
      'payload 1',
    );
    assert.equal(inMember('serviceaccounts')[0]!.mode, 'events', 'a watched kind no read asked for: skeletons');
    const accounts = inMember('serviceaccounts')[0]!.size;
    assert.deepEqual(await memberMetric(), [
      `nestor_cache_objects{resource="configmaps",mode="objects",cluster="east"} ${CHILDREN}`,
      `nestor_cache_objects{resource="secrets",mode="objects",cluster="east"} 1`,
      `nestor_cache_objects{resource="serviceaccounts",mode="events",cluster="east"} ${accounts}`,
    ]);
  });

  it("is kept whole from the first read through fleet.client(name) on, as the operator's own cache", async () => {
    await management.client.request('PATCH', `/api/v1/namespaces/${NS}/configmaps/census`, {
      metadata: { annotations: { [COUNT]: 'yes' } },
    });
    await waitFor(() => counted.length > 0, { timeoutMs: 30_000, what: 'the census read the member' });
    const mine = counted[0]!.filter((sa) => sa.metadata?.labels?.['app'] === 'fleet-cache');
    assert.equal(mine.length, CHILDREN, 'every ServiceAccount, none missing: filled before the read returned');
    assert.ok(
      mine.every((sa) => sa.metadata?.uid && sa.metadata.creationTimestamp),
      'whole objects, not skeletons',
    );
    const [accounts, ...more] = inMember('serviceaccounts');
    assert.equal(more.length, 0, 'the same informer keeps them now: no second watch');
    assert.equal(accounts!.mode, 'objects');
    assert.ok(
      (await memberMetric()).includes(
        `nestor_cache_objects{resource="serviceaccounts",mode="objects",cluster="east"} ${accounts!.size}`,
      ),
    );
  });
});
