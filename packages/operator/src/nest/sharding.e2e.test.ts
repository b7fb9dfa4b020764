// Built-in sharding across operator processes (test-support/lease-operator.js with
// NESTOR_SHARDING) on the real control plane: 3,000 ConfigMaps spread over the shards, each
// shard caching only its share; scaling 3 -> 4 -> 2 while objects change; a shard
// SIGKILLed mid-burst; a rolling update; a shard frozen (SIGSTOP) past its Lease and thawed;
// the leader frozen the same way. Across all of it no object is reconciled by two shards at
// once.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap, V1Lease } from '../client/kinds.js';
import { TestEnvironment, parallel, waitFor } from '@nestor/testing';
import { HashRing, objectShardKey } from '../sharding/index.js';
import { configMapsPath } from '../test-support/e2e-helpers.js';
import { OperatorProcess } from '../test-support/operator-process.js';
import { overlappingReconciles, reconcileIntervals } from '../test-support/reconcile-intervals.js';

const LEASE_MS = 4_000;
const RENEW_MS = 3_000;
const RETRY_MS = 1_000;
const OBJECTS = 3_000;
/** The objects whose changes are churned and must converge (the reconciler writes what it saw). */
const CHURNED = 150;
const RING = 'sharded-operator';
const SHARD_LABEL = `shard.nestor.dev/${RING}`;

let env: TestEnvironment;
let namespace: string;
const shards = new Map<string, OperatorProcess>();
const everyProcess: OperatorProcess[] = [];

function startShard(identity: string): OperatorProcess {
  const child = new OperatorProcess({
    kubeconfigPath: env.kubeconfigPath,
    namespace,
    identity,
    leaseId: RING,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_MS,
    retryPeriodMs: RETRY_MS,
    workers: 8,
    sharding: true,
  });
  shards.set(identity, child);
  everyProcess.push(child);
  return child;
}

const name = (i: number) => `obj-${String(i).padStart(4, '0')}`;

/** Who holds the Lease `name` in the test namespace (the leader election Lease is named after the ring). */
async function holderOf(name: string): Promise<string | undefined> {
  const lease = await env.client.request<V1Lease>(
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
  );
  return lease.spec?.holderIdentity;
}

/** Every ConfigMap's shard label, by name. */
async function labels(): Promise<Map<string, string | undefined>> {
  const list = await env.client.request<{ items: V1ConfigMap[] }>('GET', configMapsPath(namespace));
  return new Map(
    list.items
      .filter((cm) => cm.metadata?.name?.startsWith('obj-'))
      .map((cm) => [cm.metadata!.name!, cm.metadata?.labels?.[SHARD_LABEL]]),
  );
}

/**
 * Waits until every object is labelled with the shard the ring of the live shards names
 * for it, and each shard's cache holds exactly its objects.
 */
async function settled(live: string[], what: string): Promise<Map<string, string | undefined>> {
  const ring = new HashRing(live);
  return waitFor(
    async () => {
      const current = await labels();
      if (current.size !== OBJECTS) return undefined;
      const counts = new Map(live.map((id) => [id, 0]));
      for (const [object, shard] of current) {
        if (shard !== ring.shardFor(objectShardKey({ group: '', kind: 'ConfigMap' }, namespace, object)))
          return undefined;
        counts.set(shard!, counts.get(shard!)! + 1);
      }
      for (const id of live) {
        const reports = shards.get(id)!.of('cache');
        if (reports.at(-1)?.size !== counts.get(id)) return undefined;
      }
      return current;
    },
    { timeoutMs: 120_000, intervalMs: 500, what },
  ).catch(async (error: Error) => {
    const counts = new Map<string, number>();
    for (const shard of (await labels()).values()) counts.set(String(shard), (counts.get(String(shard)) ?? 0) + 1);
    const caches = live.map((id) => `${id}: ${shards.get(id)!.of('cache').at(-1)?.size}`).join(', ');
    const tails = live.map((id) => `--- ${id}\n${shards.get(id)!.tail(25)}`).join('\n');
    throw new Error(`${error.message}; labels ${JSON.stringify([...counts])}; caches ${caches}\n${tails}`);
  });
}

/** Changes the churned objects (v and write) until stopped; returns the last v of each. */
function churn(): { stop: () => Promise<Map<string, string>> } {
  const last = new Map<string, string>();
  let stopped = false;
  const loop = (async () => {
    for (let tick = 0; !stopped; tick++) {
      const target = name(tick % CHURNED);
      const v = String(tick);
      await env.client
        .request(
          'PATCH',
          configMapsPath(namespace, target),
          { data: { v, write: '1' } },
          'application/merge-patch+json',
        )
        .then(
          () => last.set(target, v),
          () => undefined,
        );
      await delay(10);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return last;
    },
  };
}

/** Every churned object's last change was reconciled: the annotation says what the reconciler saw. */
async function converged(last: Map<string, string>): Promise<void> {
  await waitFor(
    async () => {
      const list = await env.client.request<{ items: V1ConfigMap[] }>('GET', configMapsPath(namespace));
      const observed = new Map(
        list.items.map((cm) => [cm.metadata!.name!, cm.metadata?.annotations?.['nestor.test/observed']]),
      );
      return [...last].every(([target, v]) => observed.get(target) === v);
    },
    { timeoutMs: 120_000, intervalMs: 500, what: 'every churned object to converge' },
  );
}

/** Reconciles a frozen process was in the middle of: they did nothing while it was stopped. */
const frozen: Array<{ identity: string; from: number; to: number }> = [];

function assertNoOverlap(message: string): Promise<void> {
  return reconcileIntervals(everyProcess).then((intervals) => {
    const ran = intervals.filter(
      (i) => !frozen.some((f) => f.identity === i.identity && i.start <= f.from && i.end >= f.to),
    );
    const overlaps = overlappingReconciles(ran);
    assert.deepEqual(overlaps.slice(0, 3), [], `${message}: ${overlaps.length} overlapping reconciles`);
  });
}

before(async () => {
  env = await TestEnvironment.start();
  namespace = await env.createNamespace('sharding');
});

after(async () => {
  await Promise.all(everyProcess.map((p) => p.dispose()));
  await env.stop();
});

describe('sharding across processes', () => {
  it('3 shards, 3,000 objects: each assigned to one shard, each shard caches only its share', async (t) => {
    const ids = ['shard-a', 'shard-b', 'shard-c'];
    for (const id of ids) startShard(id);
    for (const id of ids) await shards.get(id)!.waitForEvent('ready', (e) => e.event === 'ready', 60_000);
    // Membership must not change under the test: the leader's ring holds all three first.
    await waitFor(
      async () => {
        const holder = await holderOf(RING);
        return holder !== undefined && shards.get(holder)?.tail(200).includes('3 shard(s) available');
      },
      { timeoutMs: 30_000, what: 'the leader’s ring to hold the three shards' },
    );
    const created = Date.now();
    await parallel(
      Array.from({ length: OBJECTS }, (_, i) => i),
      16,
      (i) =>
        env.client.request('POST', configMapsPath(namespace), {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: name(i) },
          data: { v: 'init' },
        }),
    );
    const assignment = await settled(ids, 'every object assigned, every cache holding its share');
    const counts = ids.map((id) => [...assignment.values()].filter((s) => s === id).length);
    t.diagnostic(
      `3,000 objects over 3 shards: ${counts.join(' / ')}, settled ${Date.now() - created} ms after the first create`,
    );
    for (const count of counts) {
      assert.ok(count > 0.5 * (OBJECTS / 3) && count < 1.6 * (OBJECTS / 3), `unbalanced: ${counts.join(' / ')}`);
    }
    // Each object's reconciles come from its own shard only (membership never changed).
    await waitFor(
      () => {
        const reconciled = new Set(
          ids.flatMap((id) =>
            shards
              .get(id)!
              .of('end')
              .map((e) => e.key),
          ),
        );
        return reconciled.size >= OBJECTS;
      },
      { timeoutMs: 120_000, what: 'every object reconciled' },
    );
    for (const id of ids) {
      const strangers = shards
        .get(id)!
        .of('start')
        .filter((e) => assignment.get(e.key!.split('/')[1]!) !== id);
      assert.deepEqual(strangers.slice(0, 3), [], `${id} reconciled objects of other shards`);
    }
    await assertNoOverlap('3 shards');
  });

  it('scales 3 -> 4 -> 2 while objects change: moves bounded by ~1/n, every object converges, no overlap', async (t) => {
    const before3 = await labels();
    const load = churn();
    let last: Map<string, string>;
    try {
      await startShard('shard-d').waitForEvent('ready', (e) => e.event === 'ready', 60_000);
      const after4 = await settled(['shard-a', 'shard-b', 'shard-c', 'shard-d'], 'the fourth shard taking its share');
      const moved = [...after4].filter(([n, s]) => before3.get(n) !== s);
      t.diagnostic(`3 -> 4: ${moved.length} of ${OBJECTS} objects moved (ideal 1/4 = ${OBJECTS / 4})`);
      assert.ok(
        moved.every(([, s]) => s === 'shard-d'),
        'only objects that go to the new shard move',
      );
      assert.ok(moved.length < 0.4 * OBJECTS, `${moved.length} objects moved for one new shard of four`);

      for (const id of ['shard-a', 'shard-b']) shards.get(id)!.signal('SIGTERM');
      for (const id of ['shard-a', 'shard-b']) {
        const exit = await shards.get(id)!.waitForExit(60_000);
        assert.equal(exit.code, 0, `${id} should stop cleanly:\n${shards.get(id)!.tail()}`);
      }
      const after2 = await settled(['shard-c', 'shard-d'], 'the two remaining shards taking every object');
      const kept = [...after4].filter(([, s]) => s === 'shard-c' || s === 'shard-d');
      assert.ok(
        kept.every(([n, s]) => after2.get(n) === s),
        'objects of the remaining shards stay where they are',
      );
      t.diagnostic(`4 -> 2: ${OBJECTS - kept.length} objects moved off the stopped shards`);
    } finally {
      last = await load.stop();
    }
    await converged(last);
    await assertNoOverlap('3 -> 4 -> 2');
  });

  it('a shard SIGKILLed mid-burst: its objects move once its Lease expires, and converge', async (t) => {
    await startShard('shard-e').waitForEvent('ready', (e) => e.event === 'ready', 60_000);
    await settled(['shard-c', 'shard-d', 'shard-e'], 'three shards again');
    const load = churn();
    let last: Map<string, string>;
    const killedAt = Date.now();
    try {
      await delay(1_000);
      shards.get('shard-c')!.signal('SIGKILL');
      await shards.get('shard-c')!.waitForExit();
      await settled(['shard-d', 'shard-e'], 'the killed shard’s objects reassigned');
      t.diagnostic(`SIGKILL -> every object on a live shard and cached there: ${Date.now() - killedAt} ms`);
    } finally {
      last = await load.stop();
    }
    await converged(last);
    await assertNoOverlap('SIGKILL');
  });

  it('a rolling update under churn: each pod replaced as a Deployment does, no overlap, every object converges', async (t) => {
    // maxSurge 1, maxUnavailable 0: a new pod starts, and once it is ready an old one gets
    // SIGTERM, without waiting for the objects to settle between the steps, so hand-overs to
    // the new pods are still in flight when the old ones stop.
    const load = churn();
    let last: Map<string, string>;
    const started = Date.now();
    try {
      for (const [next, old] of [
        ['shard-f', 'shard-d'],
        ['shard-g', 'shard-e'],
      ] as const) {
        await startShard(next).waitForEvent('ready', (e) => e.event === 'ready', 60_000);
        shards.get(old)!.signal('SIGTERM');
        const exit = await shards.get(old)!.waitForExit(60_000);
        assert.equal(exit.code, 0, `${old} should stop cleanly:\n${shards.get(old)!.tail()}`);
      }
      await settled(['shard-f', 'shard-g'], 'the new pods holding every object');
      t.diagnostic(
        `rolling update of 2 pods -> every object on the new pods and cached there: ${Date.now() - started} ms`,
      );
    } finally {
      last = await load.stop();
    }
    await converged(last);
    await assertNoOverlap('rolling update');
  });

  it('a shard frozen past its Lease: its objects move, it writes nothing stale, and it rejoins once released', async (t) => {
    // The shard that does not lead (a frozen leader exits on thawing: leaderElection.onLost).
    const [kept, thawing] = (await holderOf(RING)) === 'shard-f' ? ['shard-f', 'shard-g'] : ['shard-g', 'shard-f'];
    const load = churn();
    let last: Map<string, string>;
    try {
      await delay(500);
      const from = await shards.get(thawing)!.freeze();
      // 4 s Leases: uncertain after 8 s, taken, its objects moved, and only then released.
      await settled([kept], 'the frozen shard’s objects on the other');
      t.diagnostic(`SIGSTOP -> every object on ${kept}: ${Date.now() - from} ms`);
      // The end of the freeze is read before SIGCONT: a run it caught ends after that time,
      // even when this process is descheduled right after the signal on a loaded machine.
      frozen.push({ identity: thawing, from, to: Date.now() });
      shards.get(thawing)!.signal('SIGCONT');
      const thawed = Date.now();
      // It finds its Lease lost, aborts what ran, takes the Lease back once the leader released it,
      // and the ring gives it its share again through drains.
      await settled(['shard-f', 'shard-g'], 'the thawed shard back in the ring with its share');
      t.diagnostic(`SIGCONT -> back in the ring with its share: ${Date.now() - thawed} ms`);
    } finally {
      last = await load.stop();
    }
    await converged(last);
    await assertNoOverlap('SIGSTOP');
  });

  it('the leader frozen past its Leases: the other shard leads, takes its share, and releases its Lease once moved', async (t) => {
    const frozenLeader = (await holderOf(RING))!;
    const other = frozenLeader === 'shard-f' ? 'shard-g' : 'shard-f';
    const load = churn();
    let last: Map<string, string>;
    try {
      await delay(500);
      const from = await shards.get(frozenLeader)!.freeze();
      // The other shard wins the leader Lease, takes the frozen shard's Lease two Lease
      // durations after it saw the last renewal, moves every object to itself, and only then
      // releases the taken Lease.
      await settled([other], 'the new leader holding every object');
      await waitFor(async () => (await holderOf(frozenLeader)) === '', {
        timeoutMs: 30_000,
        what: 'the frozen shard’s Lease released once its objects moved',
      });
      t.diagnostic(`SIGSTOP of the leader -> every object on ${other}, its Lease released: ${Date.now() - from} ms`);
      // The end of the freeze is read before SIGCONT: a run it caught ends after that time,
      // even when this process is descheduled right after the signal on a loaded machine.
      frozen.push({ identity: frozenLeader, from, to: Date.now() });
      shards.get(frozenLeader)!.signal('SIGCONT');
      // It lost the leader Lease: it exits (leaderElection.onLost 'exit', the default).
      const exit = await shards.get(frozenLeader)!.waitForExit(30_000);
      assert.equal(exit.code, 1, `the thawed leader should exit 1:\n${shards.get(frozenLeader)!.tail()}`);
    } finally {
      last = await load.stop();
    }
    await converged(last);
    await assertNoOverlap('SIGSTOP of the leader');
  });
});
