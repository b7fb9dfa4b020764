#!/usr/bin/env node
// Many clusters from one operator (issue 41): engage time and memory per member cluster,
// Nestor (bench/operators/nestor-fleet.mjs: createOperator with a Fleet over
// KubeconfigSecrets) beside multicluster-runtime with its kubeconfig provider
// (bench/multicluster-runtime), in the same run, on the same API servers, doing the same
// reconcile (a server-side apply of a child ConfigMap and a status patch per Widget).
//
// Each real control plane costs a few hundred MB and seconds to start, so members share
// them: --members-per-server K puts up to K members on one member API server, each member in
// a namespace of its own with its own ServiceAccount and kubeconfig Secret; the operator
// still holds one connection set, informer and controller instance per member. A management
// control plane holds the Secrets. Per row (1, 10, 50 members), a fresh operator process:
// RSS (after forced GCs) with no member, every Secret created at once, the time from each
// Secret's creation until every Widget of that member is reconciled (seen from the bench's
// own informers: status.observedGeneration reaches the generation the bench last wrote),
// RSS once all converged, then every Secret deleted and RSS once all are disengaged.
// Fairness: two members, a burst of changes in one, one change in the other written when
// half the burst is: how long the lone change waits. Not part of npm test.
//   npm run build && node bench/fleet.mjs [--scales 1,10,50] [--objects 300] [--members-per-server 17]
//     [--impls nestor,multicluster-runtime] [--burst 2000] [--fairness-reps 2] [--think-ms 0] [--workers 8]
//     [--settle-seconds 5] [--out FILE]
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OPERATOR_NODE_OPTIONS } from '@nestor/operator/manifests';
import { parallel, TestEnvironment } from '@nestor/testing';
import { OperatorProcess, killAllChildren, processMemory } from './lib/child.mjs';
import { WIDGET_CRD, median, sleep } from './lib/common.mjs';
import { ConvergenceWatch } from './lib/fleet/convergence.mjs';
import { bumpWidget, bumpWidgets, createSecret, deleteSecret, prepareMember } from './lib/fleet/members.mjs';
import { fleetTables } from './lib/fleet/report.mjs';
import { ensureGoOperator } from './lib/go-build.mjs';

const { values } = parseArgs({
  options: {
    scales: { type: 'string', default: '1,10,50' },
    objects: { type: 'string', default: '300' },
    'members-per-server': { type: 'string', default: '17' },
    impls: { type: 'string', default: 'nestor,multicluster-runtime' },
    burst: { type: 'string', default: '2000' },
    'fairness-reps': { type: 'string', default: '2' },
    'lone-objects': { type: 'string', default: '10' },
    'think-ms': { type: 'string', default: '0' },
    workers: { type: 'string', default: '8' },
    'settle-seconds': { type: 'string', default: '5' },
    out: { type: 'string' },
  },
});
const positive = (name, { zero = false } = {}) => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < (zero ? 0 : 1)) {
    throw new Error(
      `--${name} must be a ${zero ? 'non-negative' : 'positive'} integer, got ${JSON.stringify(values[name])}`,
    );
  }
  return n;
};
const scales = values.scales.split(',').map((v) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--scales takes member counts like 1,10,50; got ${values.scales}`);
  return n;
});
const OBJECTS = positive('objects');
const PER_SERVER = positive('members-per-server');
const BURST = positive('burst', { zero: true });
const LONE = positive('lone-objects');
const FAIRNESS_REPS = positive('fairness-reps');
const THINK_MS = positive('think-ms', { zero: true });
const WORKERS = positive('workers');
const SETTLE_MS = positive('settle-seconds', { zero: true }) * 1000;
const impls = values.impls.split(',');
for (const impl of impls) {
  if (!['nestor', 'multicluster-runtime'].includes(impl))
    throw new Error(`--impls: no "${impl}" (nestor, multicluster-runtime)`);
}
const SERVERS = Math.max(Math.ceil(Math.max(...scales) / PER_SERVER), BURST > 0 ? 2 : 1);
// The machine is shared: a handful of control planes at most.
if (SERVERS + 1 > 5) {
  throw new Error(
    `${Math.max(...scales)} members at ${PER_SERVER} per server need ${SERVERS + 1} control planes; raise --members-per-server`,
  );
}
const SECRETS_NS = 'fleet-secrets';
const here = dirname(fileURLToPath(import.meta.url));
const t0 = Date.now();
const log = (line) => console.error(`[fleet ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const startedAt = new Date().toISOString();
const loadAtStart = os.loadavg();
// Built (once, cached) before any control plane runs idle waiting for it.
const goBinary = impls.includes('multicluster-runtime')
  ? await ensureGoOperator({ peer: 'multicluster-runtime', onProgress: log })
  : undefined;

// ---- control planes and members ----
const controlPlanes = [];
async function startControlPlane(name, crds) {
  const entry = { name };
  controlPlanes.push(entry);
  const started = performance.now();
  entry.env = await TestEnvironment.start({ useExistingCluster: false, crds });
  entry.startMs = performance.now() - started;
  return entry.env;
}
const rssOf = (env) => env.pids.reduce((sum, pid) => sum + processMemory(pid).rss, 0);
log(`starting ${SERVERS + 1} control planes (${SERVERS} member API servers, up to ${PER_SERVER} members each)`);
const [management, ...servers] = await Promise.all([
  startControlPlane('management', []),
  ...Array.from({ length: SERVERS }, (_, i) => startControlPlane(`members-${i}`, [WIDGET_CRD])),
]);
const stopAll = () => Promise.all(controlPlanes.map((c) => c.env?.stop()));
process.on('SIGINT', () => {
  killAllChildren();
  void stopAll().finally(() => process.exit(130));
});

let round = 0;
const members = Array.from({ length: Math.max(...scales) }, (_, i) => ({
  name: `m-${i}`,
  server: i % SERVERS,
  // One member per server: the same namespace everywhere, so Nestor's controller is the uniform one.
  namespace: PER_SERVER === 1 ? 'bench' : `m-${i}`,
  objects: OBJECTS,
}));
const fairMembers =
  BURST > 0
    ? [
        { name: 'burst', server: 0, namespace: 'fairness', objects: BURST },
        { name: 'lone', server: 1, namespace: 'fairness', objects: LONE },
      ]
    : [];
const created = servers.map(() => new Set());
const prepareStarted = performance.now();
await management.client.request('POST', '/api/v1/namespaces', { metadata: { name: SECRETS_NS } });
await parallel([...members, ...fairMembers], 4, async (m) => {
  m.kubeconfig = await prepareMember(servers[m.server], { ...m, round, createdNamespaces: created[m.server] });
});
log(
  `${members.length} members of ${OBJECTS} Widgets` +
    (BURST > 0 ? ` and the fairness pair (${BURST} and ${LONE})` : '') +
    ` ready in ${((performance.now() - prepareStarted) / 1000).toFixed(0)} s`,
);
for (const c of controlPlanes) c.rssAfterSetup = rssOf(c.env);
const watch = await ConvergenceWatch.start(servers);

// ---- one operator process ----
async function startOperator(impl, fleet) {
  const thinkMs = String(fleet === fairMembers ? THINK_MS : 0);
  if (impl === 'nestor') {
    return OperatorProcess.start('nestor-fleet', {
      // As the Deployment `nestor manifests` writes runs it.
      nodeFlags: OPERATOR_NODE_OPTIONS.split(/\s+/),
      args: [
        '--kubeconfig',
        management.kubeconfigPath,
        '--secrets-namespace',
        SECRETS_NS,
        '--workers',
        String(WORKERS),
        '--members',
        fleet.map((m) => `${m.name}=${m.namespace}`).join(','),
        '--think-ms',
        thinkMs,
      ],
    });
  }
  return OperatorProcess.start('multicluster-runtime', {
    goBinary,
    args: [
      '--kubeconfig',
      management.kubeconfigPath,
      '--secrets-namespace',
      SECRETS_NS,
      '--workers',
      String(WORKERS),
      '--think-ms',
      thinkMs,
    ],
  });
}

const stats = (op, gc = true) => op.ask({ cmd: 'stats', gc }, 'stats');

/** Moves every Widget of `fleet` to a new round (not converged until reconciled) and follows them. */
async function freshRound(fleet) {
  const r = ++round;
  await parallel(fleet, 4, (m) => bumpWidgets(servers[m.server], m.namespace, m.objects, r));
  return fleet.map((m) => watch.follow(m.server, m.namespace, r, m.objects));
}

/** Creates every member's Secret at once and waits until each member's Widgets all converged. */
async function engageAll(op, fleet, trackers) {
  const createdAt = new Map();
  const first = performance.now();
  await parallel(fleet, 16, async (m) => {
    await createSecret(management, SECRETS_NS, m.name, m.kubeconfig);
    createdAt.set(m.name, performance.now());
  });
  const boundMs = 120_000 + fleet.reduce((sum, m) => sum + m.objects, 0) * 20;
  await Promise.all(
    trackers.map((t, i) => watch.whenDone(t, boundMs, `${op.impl}: member ${fleet[i].name}`).then(() => undefined)),
  );
  const engageMs = fleet.map((m, i) => trackers[i].doneAt - createdAt.get(m.name));
  const firstMs = fleet.map((m, i) => trackers[i].firstAt - createdAt.get(m.name));
  return { engageMs, firstMs, allMs: Math.max(...trackers.map((t) => t.doneAt)) - first };
}

/** Deletes every Secret and waits until the operator holds no member; ms it took. */
async function disengageAll(op, fleet) {
  const started = performance.now();
  await parallel(fleet, 16, (m) => deleteSecret(management, SECRETS_NS, m.name));
  for (;;) {
    const now = await stats(op, false);
    if (now.clusters === 0 && (now.members ?? 0) === 0) return performance.now() - started;
    if (performance.now() - started > 120_000)
      throw new Error(`${now.clusters} members still engaged 120 s after their Secrets went`);
    await sleep(200);
  }
}

async function engageRow(impl, scale) {
  const fleet = members.slice(0, scale);
  const trackers = await freshRound(fleet);
  const op = await startOperator(impl, fleet);
  try {
    await op.next('ready', 120_000);
    await sleep(SETTLE_MS);
    const before = await stats(op);
    const { engageMs, firstMs, allMs } = await engageAll(op, fleet, trackers);
    const engagedCpu = (await stats(op, false)).cpuUs;
    await sleep(SETTLE_MS);
    const after = await stats(op);
    if (after.clusters !== scale) throw new Error(`${after.clusters} members engaged, expected ${scale}`);
    const disengageMs = await disengageAll(op, fleet);
    await sleep(SETTLE_MS);
    const disengaged = await stats(op);
    const sorted = [...engageMs].sort((a, b) => a - b);
    const firsts = [...firstMs].sort((a, b) => a - b);
    const cpuSeconds = (engagedCpu - before.cpuUs) / 1e6;
    const row = {
      impl,
      members: scale,
      objects: OBJECTS,
      engageMs: sorted.map((ms) => Math.round(ms)),
      medianMs: median(sorted),
      maxMs: sorted.at(-1),
      firstMs: firsts.map((ms) => Math.round(ms)),
      firstMedianMs: median(firsts),
      firstMaxMs: firsts.at(-1),
      allMs,
      disengageMs,
      cpuSeconds,
      cpuPer1kReconciles: (cpuSeconds * 1000) / (scale * OBJECTS),
      before,
      after,
      disengaged,
    };
    log(
      `${impl}, ${scale} members: engage→converged median ${(row.medianMs / 1000).toFixed(1)} s, max ${(row.maxMs / 1000).toFixed(1)} s; ` +
        `RSS ${(before.rss / 2 ** 20).toFixed(0)} → ${(after.rss / 2 ** 20).toFixed(0)} → ${(disengaged.rss / 2 ** 20).toFixed(0)} MB`,
    );
    return row;
  } finally {
    for (const m of fleet) watch.forget(m.server, m.namespace);
    await op.stop();
    // A row that failed half-way leaves Secrets behind: the next row starts without them.
    await parallel(fleet, 16, (m) => deleteSecret(management, SECRETS_NS, m.name).catch(() => {}));
  }
}

async function fairnessRow(impl) {
  const [burst, lone] = fairMembers;
  const trackers = await freshRound(fairMembers);
  const op = await startOperator(impl, fairMembers);
  try {
    await op.next('ready', 120_000);
    await engageAll(op, fairMembers, trackers);
    await sleep(2_000);
    for (const m of fairMembers) watch.forget(m.server, m.namespace);
    const burstRound = ++round;
    const loneRound = ++round;
    const burstTracker = watch.follow(burst.server, burst.namespace, burstRound, burst.objects);
    const start = performance.now();
    let lone$;
    await bumpWidgets(servers[burst.server], burst.namespace, burst.objects, burstRound, 32, (written) => {
      if (written !== Math.ceil(burst.objects / 2)) return;
      // Followed before it is written: its convergence is timed by the event that shows it.
      const converged = watch.whenObjectConverged(lone.server, lone.namespace, 'w-0', loneRound, 300_000);
      const sentAt = performance.now();
      lone$ = { sentAt, backlog: written - burstTracker.converged, converged };
      lone$.written = bumpWidget(servers[lone.server], lone.namespace, 'w-0', loneRound);
    });
    const burstWrittenMs = performance.now() - start;
    await lone$.written;
    const loneDoneAt = await lone$.converged;
    const burstDoneAt = await watch.whenDone(burstTracker, 300_000, `${impl}: the burst`);
    const row = {
      impl,
      burst: burst.objects,
      loneObjects: lone.objects,
      thinkMs: THINK_MS,
      loneWaitMs: loneDoneAt - lone$.sentAt,
      backlogAtLone: lone$.backlog,
      burstWrittenMs,
      burstConvergedMs: burstDoneAt - start,
    };
    log(
      `${impl} fairness: the lone change waited ${(row.loneWaitMs / 1000).toFixed(2)} s (burst backlog ${row.backlogAtLone}); ` +
        `the burst converged in ${(row.burstConvergedMs / 1000).toFixed(1)} s`,
    );
    return row;
  } finally {
    for (const m of fairMembers) watch.forget(m.server, m.namespace);
    await op.stop();
    await parallel(fairMembers, 2, (m) => deleteSecret(management, SECRETS_NS, m.name).catch(() => {}));
  }
}

const engage = [];
const fairness = [];
async function attempt(list, what, run) {
  try {
    list.push(await run());
  } catch (error) {
    log(`${what} failed: ${error.message}`);
    list.push({ ...what, error: error.message.split('\n')[0] });
  }
}
try {
  for (const [i, scale] of scales.entries()) {
    // Alternate which framework goes first, so machine drift spreads over both.
    for (const impl of i % 2 ? [...impls].reverse() : impls) {
      await attempt(engage, { impl, members: scale }, () => engageRow(impl, scale));
    }
  }
  for (let rep = 1; BURST > 0 && rep <= FAIRNESS_REPS; rep++) {
    for (const impl of rep % 2 ? impls : [...impls].reverse()) {
      await attempt(fairness, { impl, rep }, async () => ({ ...(await fairnessRow(impl)), rep }));
    }
  }
} finally {
  for (const c of controlPlanes) c.rssAtEnd = rssOf(c.env);
  watch.close();
  await stopAll();
}

const setup = {
  startedAt,
  objects: OBJECTS,
  membersPerServer: PER_SERVER,
  servers: SERVERS,
  workers: WORKERS,
  burst: BURST,
  loneObjects: LONE,
  thinkMs: THINK_MS,
  // The machine is shared: its load average (1, 5, 15 min) at the start and at the end.
  loadAverage: { start: loadAtStart, end: os.loadavg() },
  controlPlanes: controlPlanes.map(({ name, startMs, rssAfterSetup, rssAtEnd }) => ({
    name,
    startMs,
    rssAfterSetup,
    rssAtEnd,
  })),
};
const table = fleetTables({ setup, engage, fairness });
console.log(table);
const out = values.out ?? join(here, 'results', `fleet-${startedAt.slice(0, 16).replace(':', '')}.json`);
await writeFile(out, JSON.stringify({ ...setup, cpus: os.cpus().length, engage, fairness }, null, 2));
await writeFile(out.replace(/\.json$/, '.md'), `${table}\n`);
log(`results: ${out}`);
if ([...engage, ...fairness].some((r) => r.error)) process.exitCode = 1;
