// A fleet spread over the replicas of a sharded operator (issue 41), against the real API
// server: two sharded managers in one process, each with a Fleet of the same member
// clusters, each cluster engaged by one replica at a time (the one the ring names, while it
// holds the cluster's Lease); a rescale (2 -> 1 -> 2) moves whole clusters, with no two
// replicas reconciling in one cluster at once; a cluster's Lease taken away stops its
// writes. The members are contexts of one API server (a control plane costs ~350 MB): each
// member's controller acts only on the ConfigMap named after its cluster.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClusterConfig, resourcePath } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap, Lease, type V1ConfigMap, type V1Lease } from '../client/kinds.js';
import { Fleet } from '../runtime/fleet/fleet.js';
import { StaticClusters } from '../runtime/fleet/static-clusters.js';
import { configMapsPath, createConfigMap } from '../test-support/e2e-helpers.js';
import { overlappingReconciles, type ReconcileInterval } from '../test-support/reconcile-intervals.js';
import { shardedReplica, type ShardedReplica } from '../test-support/sharded-manager.js';
import { microTime } from '../runtime/leases/leader-election.js';
import { clusterKey, clusterLeaseName } from './cluster-shards.js';
import { HashRing } from './hash-ring.js';

const RING = 'fleet';
const CLUSTERS = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6'];

let env: TestEnvironment;
let namespace: string;
let contexts: ClusterConfig;
const replicas = new Map<string, ShardedReplica & { fleet: Fleet }>();
/** Every run of the members' controller that acted, keyed by cluster. */
const intervals: ReconcileInterval[] = [];
/** Runs that started while their replica did not hold the cluster's Lease (none may). */
const unleased: Array<{ replica: string; cluster: string }> = [];
/** Runs refused by the member's fence (its Lease taken away). */
const refused: Array<{ replica: string; cluster: string }> = [];

before(async () => {
  env = await TestEnvironment.start({ useExistingCluster: false });
  namespace = `spread-${Date.now().toString(36)}`;
  await env.client.request('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
  // One context per member cluster, all on this API server.
  const base = ClusterConfig.fromString(env.kubeConfig.exportConfig());
  const context = base.contexts[0]!;
  contexts = new ClusterConfig(
    base.clusters,
    base.users,
    CLUSTERS.map((name) => ({ ...context, name })),
    CLUSTERS[0]!,
  );
  for (const cluster of CLUSTERS) {
    await createConfigMap(env.client, namespace, `cm-${cluster}`, { labels: { role: 'stamp' }, data: {} });
  }
});

after(async () => {
  for (const replica of [...replicas.keys()]) await stopReplica(replica);
  await env?.stop();
});

async function startReplica(replica: string): Promise<void> {
  const shard = await shardedReplica(env.kubeConfig, { ring: RING, replica, namespace });
  const fleet = new Fleet(shard.manager, {
    providers: [new StaticClusters({ kubeConfig: contexts, contexts: CLUSTERS })],
    retry: { initialMs: 200, maxMs: 1_000 },
  });
  shard.manager.addController({
    name: 'stamp',
    resource: ConfigMap,
    namespace,
    labelSelector: 'role=stamp',
    clusters: 'members',
    reconcile: async ({ object, client, cluster }) => {
      if (object?.metadata?.name !== `cm-${cluster}`) return; // another member's object
      if (!shard.sharding.clusters.holds(cluster)) unleased.push({ replica, cluster });
      const interval = { identity: replica, key: cluster, start: performance.now(), end: Infinity };
      intervals.push(interval);
      try {
        await client.patch(ConfigMap, { namespace, name: `cm-${cluster}` }, { data: { by: replica } });
      } catch (error) {
        if ((error as Error).name === 'LeaseLostError') refused.push({ replica, cluster });
        throw error;
      } finally {
        interval.end = performance.now();
      }
    },
  });
  await shard.manager.start();
  replicas.set(replica, { ...shard, fleet });
}

async function stopReplica(replica: string): Promise<void> {
  const entry = replicas.get(replica);
  if (!entry) return;
  replicas.delete(replica);
  await entry.manager.stop();
  entry.transport.close();
}

/** Which replica runs each cluster now, per the replicas' fleets (every cluster on exactly one). */
function engagedBy(): Map<string, string[]> {
  const by = new Map<string, string[]>(CLUSTERS.map((cluster) => [cluster, []]));
  for (const [replica, { fleet }] of replicas) {
    for (const member of fleet.status()) if (member.phase === 'engaged') by.get(member.name)!.push(replica);
  }
  return by;
}

/**
 * Waits until the ring holds exactly the running replicas, each cluster is engaged by the one
 * replica the ring names, and its ConfigMap is stamped by it.
 */
async function settled(what: string): Promise<Map<string, string>> {
  let owners = new Map<string, string>();
  await waitFor(
    async () => {
      const [first] = replicas.values();
      owners = new Map(CLUSTERS.map((cluster) => [cluster, first!.sharding.clusters.shardOf(cluster) ?? '']));
      // A replica just started is in the ring once its shard Lease is seen: what it will own is known only then.
      const ring = new HashRing([...replicas.keys()]);
      if (CLUSTERS.some((cluster) => owners.get(cluster) !== ring.shardFor(clusterKey(cluster)))) return false;
      const by = engagedBy();
      for (const cluster of CLUSTERS) {
        const engaged = by.get(cluster)!;
        if (engaged.length !== 1 || engaged[0] !== owners.get(cluster) || !replicas.has(engaged[0]!)) return false;
        const cm = await env.client.request<V1ConfigMap>('GET', configMapsPath(namespace, `cm-${cluster}`));
        if (cm.data?.['by'] !== owners.get(cluster)) return false;
      }
      return true;
    },
    { timeoutMs: 60_000, what },
  );
  return owners;
}

describe('a fleet spread over the replicas of a sharded operator', () => {
  it('engages each member on one replica, moves whole clusters on a rescale, never two at once', async () => {
    await startReplica('a');
    await startReplica('b');
    const two = await settled('each cluster engaged and stamped by the replica the ring names (a, b)');
    const shares = new Set(two.values());
    assert.deepEqual([...shares].sort(), ['a', 'b'], `both replicas get clusters: ${JSON.stringify([...two])}`);
    // Elsewhere is reported as such, naming the owner.
    const statusOfA = replicas.get('a')!.fleet.status();
    for (const member of statusOfA) {
      assert.equal(member.phase === 'elsewhere', two.get(member.name) === 'b', member.name);
      if (member.phase === 'elsewhere') assert.equal(member.shard, 'b');
    }

    await stopReplica('b');
    const one = await settled("b's clusters moved to a after b stopped");
    assert.ok([...one.values()].every((owner) => owner === 'a'));

    await startReplica('b');
    const again = await settled('clusters spread over a and b again after b came back');
    assert.deepEqual(again, two, 'the same ring gives the same placement');
    assert.deepEqual(overlappingReconciles(intervals), [], 'no two replicas reconciled in one cluster at once');
    assert.deepEqual(unleased, []);
  });

  it("stops a member's reconciles and writes when its Lease is taken away, and runs them again once it is back", async () => {
    const [cluster, owner] = [...(await settled('placement before the Lease is taken'))][0]!;
    const placement = replicas.get(owner)!.sharding.clusters;
    const path = resourcePath(Lease, namespace, clusterLeaseName(RING, cluster));
    const lease = await env.client.request<V1Lease>('GET', path);
    assert.equal(lease.spec?.holderIdentity, owner);
    // Another holder for 8 s: the owner's next renewal sees it and stands the member by.
    const now = microTime(new Date());
    await env.client.request('PUT', path, {
      ...lease,
      spec: { ...lease.spec, holderIdentity: 'intruder', leaseDurationSeconds: 8, renewTime: now, acquireTime: now },
    });
    await waitFor(() => !placement.holds(cluster), {
      timeoutMs: 20_000,
      what: `replica ${owner} to let go of cluster ${cluster}'s Lease`,
    });
    // The member is standing by, warm: its client is there, and its writes are fenced.
    const member = replicas.get(owner)!.fleet.get(cluster);
    assert.ok(member, `cluster ${cluster} stays engaged (standing by) on ${owner}`);
    await assert.rejects(
      member.client.patch(
        ConfigMap,
        { namespace, name: `cm-${cluster}` },
        { data: { by: 'a write without the Lease' } },
      ),
      (error: Error) => error.name === 'LeaseLostError' && error.message.includes(cluster),
    );
    await env.client.request(
      'PATCH',
      configMapsPath(namespace, `cm-${cluster}`),
      { data: { by: 'nobody' } },
      'application/merge-patch+json',
    );
    await waitFor(() => placement.holds(cluster), {
      timeoutMs: 40_000,
      what: `replica ${owner} to take cluster ${cluster}'s Lease back once the intruder's expired`,
    });
    await waitFor(
      async () =>
        (await env.client.request<V1ConfigMap>('GET', configMapsPath(namespace, `cm-${cluster}`))).data?.['by'] ===
        owner,
      { timeoutMs: 30_000, what: `cluster ${cluster} stamped by ${owner} again with its Lease back` },
    );
    assert.deepEqual(unleased, [], "every run started while its replica held the cluster's Lease");
    assert.deepEqual(refused, [], 'a member standing by starts no run, so no write needed refusing');
  });
});
