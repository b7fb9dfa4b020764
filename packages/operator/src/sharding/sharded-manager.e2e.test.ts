// Two sharded managers in one process (each on its own connections), against the real API
// server: what the multi-process suite does not look at. A drain reaches a controller whose
// predicate drops every update (so only the drain bypass lets it through); a controller's
// label selector bounds what is sharded; children are born in their owner's shard (the
// client labels them), each replica caches only its share of them, and they move with
// their owner across a rescale (1 -> 2 -> 1) with no orphan and no overlapping reconcile;
// a `sharded: false` controller runs on the elected leader only; a manager stopped
// cleanly hands everything back.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { KubeApiError, type KubeObject } from '@nestor/core';
import { TestEnvironment, parallel, waitFor } from '@nestor/testing';
import { ConfigMap, Secret } from '../client/kinds.js';
import { generationChanged } from '../runtime/controller/predicates.js';
import { overlappingReconciles, type ReconcileInterval } from '../test-support/reconcile-intervals.js';
import { shardedReplica, type ShardedReplica } from '../test-support/sharded-manager.js';
import { HashRing } from './hash-ring.js';
import { objectShardKey } from './shard-key.js';

const RING = 'pairs';
const SHARD_LABEL = `shard.nestor.dev/${RING}`;
const PARENTS = 60;
const NOTES = 20;

let env: TestEnvironment;
let namespace: string;
let elsewhere: string;
/** Runs of the sharded controller and of the leader-only one, by replica. */
const sharded: Array<{ replica: string; key: string }> = [];
const notes: Array<{ replica: string; key: string }> = [];
const leaderOnly: Array<{ replica: string; key: string }> = [];
/** Every run of the sharded parents controller, as [start, end] (performance.now()). */
const intervals: ReconcileInterval[] = [];
const replicas = new Map<string, ShardedReplica>();

const parentName = (i: number) => `parent-${String(i).padStart(2, '0')}`;
const path = (kind: 'configmaps' | 'secrets', name = '') =>
  `/api/v1/namespaces/${namespace}/${kind}${name ? `/${name}` : ''}`;

async function startReplica(replica: string): Promise<void> {
  const { manager, transport, lock, sharding } = await shardedReplica(env.kubeConfig, {
    ring: RING,
    replica,
    namespace,
  });
  manager.addController({
    name: 'parents',
    resource: ConfigMap,
    namespace,
    labelSelector: 'role=parent',
    // ConfigMaps have no generation: every update is dropped, a drain request included, unless it bypasses the predicates.
    predicates: [(event) => event.type === 'added' || generationChanged(event)],
    owns: [Secret],
    reconcile: async ({ key, object, client }) => {
      sharded.push({ replica, key });
      const interval = { identity: replica, key, start: performance.now(), end: Infinity };
      intervals.push(interval);
      const name = `${object!.metadata!.name}-child`;
      try {
        // The reconcile's client: it labels the child with its owner's shard.
        await client.create({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name,
            namespace,
            ownerReferences: [
              {
                apiVersion: 'v1',
                kind: 'ConfigMap',
                name: object!.metadata!.name!,
                uid: object!.metadata!.uid!,
                controller: true,
              },
            ],
          },
          stringData: { owner: key },
        });
      } catch (error) {
        if (!(error instanceof KubeApiError && error.status === 409)) throw error;
      } finally {
        interval.end = performance.now();
      }
    },
  });
  manager.addController({
    name: 'notes',
    resource: ConfigMap,
    namespaces: [namespace],
    labelSelector: 'role=note',
    // Updates never pass: a drain request reaches the shard only by bypassing this.
    predicates: [(event) => event.type !== 'updated'],
    reconcile: ({ key }) => {
      notes.push({ replica, key });
    },
  });
  manager.addController({
    name: 'audit',
    resource: ConfigMap,
    namespace,
    labelSelector: 'role=parent',
    sharded: false,
    reconcile: ({ key }) => {
      leaderOnly.push({ replica, key });
    },
  });
  await manager.start();
  replicas.set(replica, { manager, transport, lock, sharding });
}

async function stopReplica(replica: string): Promise<void> {
  const entry = replicas.get(replica);
  if (!entry) return;
  replicas.delete(replica);
  await entry.manager.stop();
  entry.transport.close();
}

/** Waits until every note carries the label the ring of `live` names for it. */
async function notesOn(live: string[]): Promise<Map<string, string>> {
  const ring = new HashRing(live);
  return waitFor(
    async () => {
      const list = await env.client.request<{ items: KubeObject[] }>(
        'GET',
        `${path('configmaps')}?labelSelector=role%3Dnote`,
      );
      const placement = new Map<string, string>();
      for (const note of list.items) {
        const name = note.metadata!.name!;
        const want = ring.shardFor(objectShardKey({ group: '', kind: 'ConfigMap' }, namespace, name))!;
        if (note.metadata?.labels?.[SHARD_LABEL] !== want) return undefined;
        // A hand-over leaves neither the drain label nor its request time behind.
        if (note.metadata?.labels?.[`drain.${SHARD_LABEL}`] !== undefined) return undefined;
        if (note.metadata?.annotations?.['shard.nestor.dev/drain-requested-at'] !== undefined) return undefined;
        placement.set(`${namespace}/${name}`, want);
      }
      return placement.size === NOTES ? placement : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `notes on the shards of ${live.join(', ')}` },
  );
}

/** Waits until every parent and child carries the label the ring of `live` names for the parent. */
async function settledOn(live: string[]): Promise<Map<string, string>> {
  const ring = new HashRing(live);
  return waitFor(
    async () => {
      const parents = await env.client.request<{ items: KubeObject[] }>(
        'GET',
        `${path('configmaps')}?labelSelector=role%3Dparent`,
      );
      const children = await env.client.request<{ items: KubeObject[] }>('GET', path('secrets'));
      const byParent = new Map<string, string>();
      for (const parent of parents.items) {
        const name = parent.metadata!.name!;
        const want = ring.shardFor(objectShardKey({ group: '', kind: 'ConfigMap' }, namespace, name))!;
        if (parent.metadata?.labels?.[SHARD_LABEL] !== want) return undefined;
        byParent.set(name, want);
      }
      const ownedChildren = children.items.filter((s) => s.metadata?.ownerReferences?.length);
      if (byParent.size !== PARENTS || ownedChildren.length !== PARENTS) return undefined;
      for (const child of ownedChildren) {
        const owner = child.metadata!.ownerReferences![0]!.name;
        if (child.metadata?.labels?.[SHARD_LABEL] !== byParent.get(owner)) return undefined;
      }
      return byParent;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `parents and children on the shards of ${live.join(', ')}` },
  );
}

/** Waits until each live replica's child informers hold exactly the children of the parents on its shard. */
async function childCachesOn(live: string[]): Promise<void> {
  const placement = await settledOn(live);
  await waitFor(
    () =>
      live.every((id) => {
        const manager = replicas.get(id)!.manager;
        const cached = manager.informers
          .all()
          .filter((informer) => informer.resource.plural === 'secrets')
          .flatMap((informer) => informer.list());
        const share = [...placement.values()].filter((shard) => shard === id).length;
        return (
          cached.length === share &&
          manager.shardedChildren === share &&
          cached.every(
            (child) =>
              child.metadata?.labels?.[SHARD_LABEL] === id &&
              placement.get(child.metadata!.ownerReferences![0]!.name) === id,
          )
        );
      }),
    { timeoutMs: 30_000, intervalMs: 100, what: `each of ${live.join(', ')} caching only its share of the children` },
  );
}

/**
 * Polls the parents, then the children (in that order: a child seen on the shard its owner
 * left, after the owner was seen gone, did not move first), and records every orphan: a
 * child still on its owner's former shard, unchanged since before the owner moved.
 */
function watchOrphans(): { stop(): Promise<string[]> } {
  let stopped = false;
  const orphans: string[] = [];
  const owners = new Map<string, { shard?: string; left?: string; poll: number }>();
  const children = new Map<string, { shard?: string; poll: number }>();
  const done = (async () => {
    for (let poll = 0; !stopped; poll++) {
      const parents = await env.client.request<{ items: KubeObject[] }>(
        'GET',
        `${path('configmaps')}?labelSelector=role%3Dparent`,
      );
      const secrets = await env.client.request<{ items: KubeObject[] }>('GET', path('secrets'));
      for (const parent of parents.items) {
        const shard = parent.metadata?.labels?.[SHARD_LABEL];
        const known = owners.get(parent.metadata!.name!);
        if (!known) owners.set(parent.metadata!.name!, { shard, poll });
        else if (known.shard !== shard) owners.set(parent.metadata!.name!, { shard, left: known.shard, poll });
      }
      for (const secret of secrets.items) {
        const ownerName = secret.metadata?.ownerReferences?.[0]?.name;
        if (!ownerName) continue;
        const name = secret.metadata!.name!;
        const shard = secret.metadata?.labels?.[SHARD_LABEL];
        const known = children.get(name);
        if (!known || known.shard !== shard) children.set(name, { shard, poll });
        const owner = owners.get(ownerName);
        if (owner?.left !== undefined && shard === owner.left && children.get(name)!.poll < owner.poll)
          orphans.push(`${name} still on ${shard} after its owner moved to ${owner.shard}`);
      }
      await sleep(50);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return orphans;
    },
  };
}

let orphanWatch: { stop(): Promise<string[]> } | undefined;

before(async () => {
  env = await TestEnvironment.start();
  namespace = await env.createNamespace('sharded-managers');
  elsewhere = await env.createNamespace('elsewhere');
});

after(async () => {
  for (const replica of [...replicas.keys()]) await stopReplica(replica);
  await env.stop();
});

describe('sharded managers', () => {
  it('assigns every parent to the one shard, and its child follows', async () => {
    await startReplica('shard-x');
    await parallel(
      Array.from({ length: PARENTS }, (_, i) => i),
      8,
      (i) =>
        env.client.request('POST', path('configmaps'), {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: parentName(i), labels: { role: 'parent' } },
        }),
    );
    await parallel(
      Array.from({ length: NOTES }, (_, i) => i),
      8,
      (i) =>
        env.client.request('POST', path('configmaps'), {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `note-${i}`, labels: { role: 'note' } },
        }),
    );
    await env.client.request('POST', path('configmaps'), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'unrelated', labels: { role: 'other' } },
    });
    // A note outside the notes controller's namespaces: no controller of this operator watches it.
    await env.client.request('POST', `/api/v1/namespaces/${elsewhere}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'note-elsewhere', labels: { role: 'note' } },
    });
    await settledOn(['shard-x']);
    await notesOn(['shard-x']);
    assert.ok(sharded.every((run) => run.replica === 'shard-x'));
    // The children were born labelled: the leader assigned only the parents and the notes.
    await childCachesOn(['shard-x']);
    assert.equal(replicas.get('shard-x')!.sharding.assignerStats.assigned, PARENTS + NOTES);
    const unrelated = await env.client.request<KubeObject>('GET', path('configmaps', 'unrelated'));
    assert.equal(unrelated.metadata?.labels?.[SHARD_LABEL], undefined, 'no controller watches it: not sharded');
    const outside = await env.client.request<KubeObject>(
      'GET',
      `/api/v1/namespaces/${elsewhere}/configmaps/note-elsewhere`,
    );
    assert.equal(outside.metadata?.labels?.[SHARD_LABEL], undefined, 'outside the watched namespaces: not sharded');
  });

  it('a drain reaches a controller whose predicates drop every update', async () => {
    orphanWatch = watchOrphans();
    await startReplica('shard-y');
    const placement = await notesOn(['shard-x', 'shard-y']);
    const onY = [...placement].filter(([, shard]) => shard === 'shard-y').map(([key]) => key);
    assert.ok(onY.length > 0, 'shard-y got some notes');
    await waitFor(() => onY.every((key) => notes.some((run) => run.replica === 'shard-y' && run.key === key)), {
      timeoutMs: 30_000,
      what: 'shard-y reconciling the notes handed over to it',
    });
  });

  it('a new shard takes its share of the parents; their children move with them', async () => {
    const placement = await settledOn(['shard-x', 'shard-y']);
    await childCachesOn(['shard-x', 'shard-y']);
    const onY = [...placement].filter(([, shard]) => shard === 'shard-y').map(([name]) => `${namespace}/${name}`);
    assert.ok(onY.length > 0 && onY.length < PARENTS, `shard-y got ${onY.length} of ${PARENTS}`);
    await waitFor(() => onY.every((key) => sharded.some((run) => run.replica === 'shard-y' && run.key === key)), {
      timeoutMs: 30_000,
      what: 'shard-y reconciling the parents it was given',
    });
    // A change to a child reconciles its owner on the owner's shard: the child is in that shard's cache.
    const key = onY[0]!;
    const child = `${key.split('/')[1]}-child`;
    const before = sharded.filter((run) => run.key === key && run.replica === 'shard-y').length;
    await env.client.request(
      'PATCH',
      path('secrets', child),
      { metadata: { labels: { touched: 'yes' } } },
      'application/merge-patch+json',
    );
    await waitFor(() => sharded.filter((run) => run.key === key && run.replica === 'shard-y').length > before, {
      timeoutMs: 30_000,
      what: 'the owner reconciled on its shard after its child changed',
    });
  });

  it('runs a sharded: false controller on the elected leader only', () => {
    const leader = [...replicas].find(([, r]) => r.manager.isLeader)?.[0];
    assert.ok(leader, 'one replica leads');
    assert.ok(leaderOnly.length >= PARENTS, 'the leader-only controller saw every parent');
    assert.deepEqual([...new Set(leaderOnly.map((run) => run.replica))], [leader]);
  });

  it('a shard stopped cleanly hands its objects back at once', async () => {
    await stopReplica('shard-y');
    await settledOn(['shard-x']);
    await notesOn(['shard-x']);
    await childCachesOn(['shard-x']);
  });

  it('across 1 -> 2 -> 1 replicas, no child was left behind by its owner and no two replicas reconciled one parent at once', async () => {
    assert.ok(orphanWatch, 'the orphan watch ran');
    assert.deepEqual(await orphanWatch.stop(), []);
    assert.ok(
      sharded.some((run) => run.replica === 'shard-y'),
      'the parents did move',
    );
    assert.deepEqual(overlappingReconciles(intervals), []);
  });
});
