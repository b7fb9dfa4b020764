#!/usr/bin/env node
// Built-in sharding on one control plane: 1, 2, 3 and 4 replicas of a sharded operator
// (bench/operators/nestor-sharded.mjs, a Nest app whose reconcile writes back what it saw)
// over 10,000 ConfigMaps, and one unsharded replica as the baseline. For each n, on a fresh
// control plane (so the API server's own state is the same for every n):
//   1. create the objects, start n replicas, wait until every object is on the shard the
//      ring names and each replica caches exactly its share; RSS per replica (after GC);
//   2. churn: change random objects at a fixed rate for a fixed window: CPU per replica,
//      reconciles/s, change -> reconcile latency p50/p99 (the queue's wait and the watch);
//   3. burst: change every object at once (32 writers): time until every change is
//      observed, i.e. reconciled and written back: the throughput of the whole system;
//   4. rebalance (n < 4): start replica n+1, time until settled again, objects moved.
// With --children N each ConfigMap's reconcile also server-side applies N owned Secrets
// (~512 B each): each replica then caches its share of the children as well, which the
// report gives per replica with the children that are not on their owner's shard (none
// expected). --memory-only stops after step 1 (RSS and cached objects per replica).
// The control plane's CPU (etcd, kube-apiserver, kube-controller-manager) is measured over
// the same windows: on 2 cores it, not the operator, is the ceiling.
//
//   node bench/sharding.mjs [--objects 10000] [--replicas 1,2,3,4] [--rate 150] [--churn-seconds 30]
//                           [--children 3] [--memory-only]
//
// Writes bench/results/<date>-sharding.json and .md (<date>-sharded-children.* with
// children). Never part of `npm test`.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { HashRing, objectShardKey } from '@nestor/operator/sharding';
import { parallel, TestEnvironment } from '@nestor/testing';
import { OperatorProcess, killAllChildren, processCpuSeconds, processMemory } from './lib/child.mjs';
import { nowUs, sleep } from './lib/common.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SCRIPT = join(here, 'operators', 'nestor-sharded.mjs');
const OBSERVED = 'bench.nestor.dev/observed';

const { values: opts } = parseArgs({
  options: {
    objects: { type: 'string', default: '10000' },
    replicas: { type: 'string', default: '1,2,3,4' },
    rate: { type: 'string', default: '150' },
    'churn-seconds': { type: 'string', default: '30' },
    workers: { type: 'string', default: '8' },
    children: { type: 'string', default: '0' },
    'memory-only': { type: 'boolean', default: false },
  },
});
const CHILDREN = Number(opts.children);
const MEMORY_ONLY = opts['memory-only'];
const OBJECTS = Number(opts.objects);
const RATE = Number(opts.rate);
const CHURN_S = Number(opts['churn-seconds']);
const WORKERS = Number(opts.workers);
const counts = opts.replicas.split(',').map(Number);

process.on('exit', killAllChildren);
process.on('SIGINT', () => process.exit(130));

const name = (i) => `cm-${String(i).padStart(5, '0')}`;
const log = (message) => process.stderr.write(`[sharding bench] ${message}\n`);

async function withControlPlane(run) {
  const env = await TestEnvironment.start({ useExistingCluster: false });
  try {
    return await run(env);
  } finally {
    await env.stop();
  }
}

async function createObjects(env, namespace) {
  const started = Date.now();
  await parallel(
    Array.from({ length: OBJECTS }, (_, i) => i),
    32,
    (i) =>
      env.client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: name(i) },
        data: { v: '0', at: '0', payload: 'x'.repeat(1024) },
      }),
  );
  log(`created ${OBJECTS} ConfigMaps in ${Date.now() - started} ms`);
}

/** Every object's shard label and observed annotation, by name (one LIST from the watch cache). */
async function state(env, namespace, ring) {
  const list = await env.client.request('GET', `/api/v1/namespaces/${namespace}/configmaps?resourceVersion=0`);
  const out = new Map();
  // Every ConfigMap the controller sees (kube-root-ca.crt too): each is sharded.
  for (const cm of list.items) {
    out.set(cm.metadata.name, {
      shard: cm.metadata.labels?.[`shard.nestor.dev/${ring}`],
      drain: cm.metadata.labels?.[`drain.shard.nestor.dev/${ring}`],
      observed: cm.metadata.annotations?.[OBSERVED],
      v: cm.data?.v,
    });
  }
  return out;
}

async function statsOf(replica, options = {}) {
  return replica.process.ask({ cmd: 'stats', ...options }, 'stats', 60_000);
}

/** Waits until every object is on the shard the ring of `shards` names and each replica caches its share. */
async function settle(env, namespace, ring, replicas, timeoutMs = 300_000) {
  const ids = replicas.map((r) => r.id);
  const hash = new HashRing(ids);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const objects = await state(env, namespace, ring);
    const share = new Map(ids.map((id) => [id, 0]));
    let placed = 0;
    for (const [object, { shard }] of objects) {
      if (shard === hash.shardFor(objectShardKey({ group: '', kind: 'ConfigMap' }, namespace, object))) {
        placed++;
        share.set(shard, share.get(shard) + 1);
      }
    }
    if (placed === objects.size && objects.size >= OBJECTS) {
      const cached = await Promise.all(replicas.map((r) => statsOf(r).then((s) => s.cached)));
      if (cached.every((c, i) => c === share.get(ids[i]))) return { share: ids.map((id) => share.get(id)), objects };
    }
    if (Date.now() % 30_000 < 500) {
      const counts = {};
      for (const [object, { shard, drain }] of objects) {
        const want = hash.shardFor(objectShardKey({ group: '', kind: 'ConfigMap' }, namespace, object));
        if (shard !== want)
          counts[`${shard}->${want} drain ${drain}`] = (counts[`${shard}->${want} drain ${drain}`] ?? 0) + 1;
      }
      log(`${placed}/${objects.size} placed; not placed: ${JSON.stringify(counts)}`);
    }
    if (Date.now() > deadline) throw new Error(`not settled within ${timeoutMs} ms: ${placed}/${objects.size} placed`);
    await sleep(500);
  }
}

/** Waits until every object's observed annotation equals its v. */
async function converged(env, namespace, ring, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const objects = await state(env, namespace, ring);
    let behind = 0;
    for (const [object, { observed, v }] of objects) if (object.startsWith('cm-') && observed !== v) behind++;
    if (behind === 0) return;
    if (Date.now() > deadline) throw new Error(`${behind} objects not converged within ${timeoutMs} ms`);
    if (Date.now() % 10_000 < 250) log(`${behind} objects still to converge`);
    await sleep(250);
  }
}

/** Children whose shard label differs from their owner's (orphans), from one LIST of each kind. */
async function offShard(env, namespace, ring) {
  const label = `shard.nestor.dev/${ring}`;
  const owners = await env.client.request('GET', `/api/v1/namespaces/${namespace}/configmaps?resourceVersion=0`);
  const shardOf = new Map(owners.items.map((cm) => [cm.metadata.name, cm.metadata.labels?.[label]]));
  const children = await env.client.request('GET', `/api/v1/namespaces/${namespace}/secrets?resourceVersion=0`);
  let off = 0;
  for (const child of children.items) {
    const owner = child.metadata.ownerReferences?.find((r) => r.controller)?.name;
    if (owner && child.metadata.labels?.[label] !== shardOf.get(owner)) off++;
  }
  return off;
}

const patch = (env, namespace, object, v) =>
  env.client.request(
    'PATCH',
    `/api/v1/namespaces/${namespace}/configmaps/${object}`,
    { data: { v: String(v), at: String(nowUs()) } },
    'application/merge-patch+json',
  );

/** Changes random objects at `RATE`/s for `CHURN_S` seconds; returns the writes made. */
async function churn(env, namespace) {
  const interval = 1000 / RATE;
  const started = performance.now();
  let sent = 0;
  const inFlight = new Set();
  while (performance.now() - started < CHURN_S * 1000) {
    const due = Math.floor((performance.now() - started) / interval);
    while (sent < due) {
      const object = name(Math.floor(Math.random() * OBJECTS));
      const write = patch(env, namespace, object, `c${sent}`).catch(() => undefined);
      inFlight.add(write);
      write.finally(() => inFlight.delete(write));
      sent++;
    }
    await sleep(5);
  }
  await Promise.all(inFlight);
  return { writes: sent, seconds: (performance.now() - started) / 1000 };
}

async function startReplica(env, namespace, ring, id) {
  const process = await OperatorProcess.start('nestor-nest', {
    kubeconfig: env.kubeconfigPath,
    namespace,
    mode: 'reconcile',
    workers: WORKERS,
    script: SCRIPT,
    nodeFlags: ['--max-semi-space-size=4'],
    extraArgs: [
      ...(ring ? ['--ring', ring, '--shard', id] : []),
      ...(CHILDREN > 0 ? ['--children', String(CHILDREN)] : []),
    ],
  });
  return { id, process };
}

const controlPlaneCpu = (env) => env.pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);

async function measure(n, sharded) {
  return withControlPlane(async (env) => {
    const namespace = await env.createNamespace(`bench-${n}`);
    const ring = sharded ? `bench-${n}` : undefined;
    let idleRssMiB;
    if (!sharded) {
      // What a replica costs with nothing to cache: the part of RSS sharding cannot divide.
      const idle = await startReplica(env, await env.createNamespace('idle'), undefined, 'idle');
      await sleep(3_000);
      await statsOf(idle, { gc: true });
      idleRssMiB = processMemory(idle.process.pid).rss / 2 ** 20;
      await idle.process.stop();
    }
    await createObjects(env, namespace);
    const startedAt = Date.now();
    const replicas = [];
    for (let i = 0; i < n; i++) replicas.push(await startReplica(env, namespace, ring, `shard-${i}`));
    let share = [OBJECTS];
    if (sharded) share = (await settle(env, namespace, ring, replicas)).share;
    else {
      for (;;) {
        const { cached } = await statsOf(replicas[0]);
        if (cached >= OBJECTS) break; // the objects (and kube-root-ca.crt with a kube-controller-manager)
        await sleep(500);
      }
    }
    await converged(env, namespace, ring ?? 'none');
    let childrenOffShard;
    if (CHILDREN > 0) {
      // Every child in the cache of the replica its owner is on.
      for (const deadline = Date.now() + 300_000; ;) {
        const children = await Promise.all(replicas.map((r) => statsOf(r).then((s) => s.children)));
        if (children.every((c, i) => c === share[i] * CHILDREN)) break;
        if (Date.now() > deadline) throw new Error(`children not cached as shared: ${children.join('/')}`);
        await sleep(500);
      }
      if (sharded) childrenOffShard = await offShard(env, namespace, ring);
    }
    const settleMs = Date.now() - startedAt;
    log(`n=${n}${sharded ? '' : ' (unsharded)'}: settled and converged in ${settleMs} ms, shares ${share.join('/')}`);
    await sleep(3_000);
    const steady = await Promise.all(replicas.map((r) => statsOf(r, { gc: true, reset: true })));
    const rss = replicas.map((r) => processMemory(r.process.pid).rss);
    const settled = {
      n,
      sharded,
      objects: OBJECTS,
      children: OBJECTS * CHILDREN,
      controlPlaneProcesses: env.pids.length,
      ...(idleRssMiB !== undefined ? { idleRssMiB } : {}),
      settleMs,
      ...(childrenOffShard !== undefined ? { childrenOffShard } : {}),
    };
    const memoryOf = (i) => ({
      id: replicas[i].id,
      cached: steady[i].cached,
      cachedChildren: steady[i].children ?? 0,
      rssMiB: rss[i] / 2 ** 20,
      heapMiB: steady[i].heap / 2 ** 20,
    });
    if (MEMORY_ONLY) {
      for (const r of replicas) await r.process.stop();
      return { ...settled, replicas: replicas.map((_, i) => memoryOf(i)) };
    }

    // Churn at a fixed rate.
    const cpu0 = await Promise.all(replicas.map((r) => statsOf(r).then((s) => s.cpuUs)));
    const cp0 = controlPlaneCpu(env);
    const load = await churn(env, namespace);
    await converged(env, namespace, ring ?? 'none');
    const churned = await Promise.all(replicas.map((r) => statsOf(r, { reset: true })));
    const cp1 = controlPlaneCpu(env);
    const churnCpu = churned.map((s, i) => (s.cpuUs - cpu0[i]) / 1e6);
    const latencies = churned.map((s) => s.latencies);

    // Burst: every object changed at once; until every change is written back.
    const burstStarted = Date.now();
    const cpb0 = controlPlaneCpu(env);
    await parallel(
      Array.from({ length: OBJECTS }, (_, i) => i),
      32,
      (i) => patch(env, namespace, name(i), `b${i}`).catch(() => undefined),
    );
    const writtenMs = Date.now() - burstStarted;
    await converged(env, namespace, ring ?? 'none');
    const burstMs = Date.now() - burstStarted;
    const burst = await Promise.all(replicas.map((r) => statsOf(r, { reset: true })));
    const burstCp = controlPlaneCpu(env) - cpb0;

    // Rebalance: one more replica.
    let rebalance;
    if (sharded && n < Math.max(...counts)) {
      const before = await state(env, namespace, ring);
      const t0 = Date.now();
      replicas.push(await startReplica(env, namespace, ring, `shard-${n}`));
      const settled = await settle(env, namespace, ring, replicas);
      const moved = [...settled.objects].filter(([o, s]) => before.get(o)?.shard !== s.shard).length;
      rebalance = { ms: Date.now() - t0, moved, share: settled.share };
      log(`n=${n} -> ${n + 1}: ${moved} moved in ${rebalance.ms} ms`);
    }
    for (const r of replicas) await r.process.stop();
    return {
      ...settled,
      replicas: replicas.slice(0, n).map((r, i) => ({
        ...memoryOf(i),
        churnCpuS: churnCpu[i],
        churnReconciles: churned[i].reconciles,
        churnLatencyMs: { p50: latencies[i].p50 / 1000, p99: latencies[i].p99 / 1000, n: latencies[i].n },
        burstReconciles: burst[i].reconciles,
        burstLatencyMs: { p50: burst[i].latencies.p50 / 1000, p99: burst[i].latencies.p99 / 1000 },
      })),
      churn: { ...load, controlPlaneCpuS: cp1 - cp0 },
      burst: {
        writesMs: writtenMs,
        convergedMs: burstMs,
        changesPerS: OBJECTS / (burstMs / 1000),
        controlPlaneCpuS: burstCp,
      },
      ...(rebalance ? { rebalance } : {}),
    };
  });
}

const date = new Date().toISOString().slice(0, 16).replace(/[:]/g, '');
const base = `${date}-${CHILDREN > 0 ? 'sharded-children' : 'sharding'}`;
const resultsDir = join(here, 'results');
await mkdir(resultsDir, { recursive: true });
const runs = [];
// The JSON is written after each run, so a long run that is cut short keeps what it measured.
for (const [n, sharded] of [[1, false], ...counts.map((c) => [c, true])]) {
  runs.push(await measure(n, sharded));
  await writeFile(join(resultsDir, `${base}.partial.json`), JSON.stringify({ options: opts, runs }, null, 2));
}

const doc = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, loadavg: os.loadavg(), node: process.version },
  options: {
    objects: OBJECTS,
    children: CHILDREN,
    memoryOnly: MEMORY_ONLY,
    rate: RATE,
    churnSeconds: CHURN_S,
    workers: WORKERS,
  },
  runs,
};
await writeFile(join(resultsDir, `${base}.json`), JSON.stringify(doc, null, 2));
await rm(join(resultsDir, `${base}.partial.json`), { force: true });

const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const idle = runs[0].idleRssMiB;
const lines = [
  `# Sharding: ${OBJECTS} ConfigMaps${CHILDREN > 0 ? ` owning ${OBJECTS * CHILDREN} Secrets` : ''}, 1-${Math.max(...counts)} replicas (${doc.date})`,
  '',
  `${os.cpus().length} cores shared by the control plane (${runs[0].controlPlaneProcesses} processes: etcd, kube-apiserver${runs[0].controlPlaneProcesses > 2 ? ', kube-controller-manager' : ''}), every replica and this load generator; load average at the end ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(
      ' ',
    )}. Objects of ~1.3 KiB${CHILDREN > 0 ? `, children of ~0.7 KiB (${CHILDREN} per object, server-side applied by its reconcile)` : ''}.${
    MEMORY_ONLY ? '' : ` Churn: ${RATE} changes/s for ${CHURN_S} s. Burst: every object changed by 32 writers.`
  } An idle replica (no objects) has ${f(idle)} MiB of RSS. RSS after two full GCs, once every object was reconciled and cached by the replica its shard names.`,
  '',
];
if (MEMORY_ONLY) {
  const unsharded = runs[0].replicas[0].rssMiB - idle;
  lines.push(
    "| replicas | objects per replica | children per replica | RSS per replica MiB | above an idle replica, MiB | of the unsharded figure | heap after GC MiB | children off their owner's shard |",
    '|---|---|---|---|---|---|---|---|',
  );
  for (const run of runs) {
    const r = run.replicas;
    const above = r.map((x) => x.rssMiB - idle);
    lines.push(
      `| ${run.n}${run.sharded ? '' : ' (unsharded)'} | ${r.map((x) => x.cached).join(' / ')} | ${r.map((x) => x.cachedChildren).join(' / ')} | ${r
        .map((x) => f(x.rssMiB))
        .join(
          ' / ',
        )} | ${above.map((x) => f(x)).join(' / ')} | ${above.map((x) => f(x / unsharded, 2)).join(' / ')} | ${r.map((x) => f(x.heapMiB)).join(' / ')} | ${run.childrenOffShard ?? '-'} |`,
    );
  }
} else {
  lines.push(
    '| replicas | objects per replica | children per replica | RSS per replica MiB | churn CPU per replica s | churn p99 ms | burst: changes/s | burst control-plane CPU s | rebalance to n+1 |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const run of runs) {
    const r = run.replicas;
    lines.push(
      `| ${run.n}${run.sharded ? '' : ' (unsharded)'} | ${r.map((x) => x.cached).join(' / ')} | ${r.map((x) => x.cachedChildren).join(' / ')} | ${r
        .map((x) => f(x.rssMiB))
        .join(
          ' / ',
        )} | ${r.map((x) => f(x.churnCpuS, 1)).join(' / ')} | ${r.map((x) => f(x.churnLatencyMs.p99)).join(' / ')} | ${f(
        run.burst.changesPerS,
      )} | ${f(run.burst.controlPlaneCpuS, 1)} | ${run.rebalance ? `${run.rebalance.moved} moved in ${f(run.rebalance.ms / 1000, 1)} s` : '-'} |`,
    );
  }
}
const markdown = lines.join('\n') + '\n';
await writeFile(join(resultsDir, `${base}.md`), markdown);
process.stdout.write(markdown);
