#!/usr/bin/env node
// Nestor's benchmarks against a real control plane (a private etcd + kube-apiserver on
// 127.0.0.1, from @nestor/testing). Each operator under test runs in its own child process
// (bench/operators/*, bench/controller-runtime), so its CPU and memory are its own; this
// process is the load generator.
//
//   npm run bench                     full run (build first), ~20-40 min on 2 cores
//   npm run bench -- --quick          small run, ~5 min
//   node bench/run.mjs --mode webhooks   admission and conversion webhooks (bench/lib/webhook-scenarios.mjs)
//   node bench/run.mjs --help         every option
//
// Writes bench/results/<date>.json and .md, prints the tables. Never part of `npm test`.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Transport } from '@nestor/core';
import { OPERATOR_NODE_OPTIONS } from '@nestor/operator/manifests';
import { parallel, TestEnvironment } from '@nestor/testing';
import { OperatorProcess, killAllChildren, processCpuSeconds, processMemory } from './lib/child.mjs';
import {
  SYNC_KINDS,
  WIDGET_CRD,
  WRITTEN_AT,
  configMapsPath,
  nowUs,
  percentile,
  sleep,
  widgetsPath,
} from './lib/common.mjs';
import { cargoCommand, crateVersion, ensureKubeRsOperator } from './lib/cargo-build.mjs';
import { controllerRuntimeVersion, ensureGoOperator, goCommand } from './lib/go-build.mjs';
import { runCharts, writeCharts } from './lib/report-charts.mjs';
import { IMPL_LABELS, renderTables, summarize } from './lib/report.mjs';
import { IDLE_MS, OWNERS, scenarioOwned } from './lib/owned-scenario.mjs';
import { renderWebhookTables, summarizeWebhooks } from './lib/webhook-report.mjs';
import {
  CONVERSION_RESOURCE,
  OPTIONAL_WEBHOOK_IMPLS,
  WEBHOOK_IMPLS,
  scenarioAdmission,
  scenarioApiServerAdmission,
  scenarioConversion,
} from './lib/webhook-scenarios.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ALL_IMPLS = ['nestor', 'nestor-nest', 'client-node', 'controller-runtime', 'apiserver'];
/**
 * Run only when named: Nestor and controller-runtime told to use JSON, not protobuf, for built-in kinds;
 * Nestor from another checkout (NESTOR_BEFORE), for before/after comparisons in one run;
 * kube-rs (bench/kube-rs, a ~10 min first build on 2 cores).
 */
const OPTIONAL_IMPLS = ['nestor-json', 'controller-runtime-json', 'nestor-before', 'nestor-nest-before', 'kube-rs'];
const NODE_IMPLS = ['nestor', 'nestor-json', 'nestor-nest', 'client-node', 'nestor-before', 'nestor-nest-before'];
const DEFAULT_NODE_FLAGS = OPERATOR_NODE_OPTIONS;

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    mode: { type: 'string', default: 'operators' },
    scenarios: { type: 'string' },
    impls: { type: 'string' },
    sizes: { type: 'string' },
    'sync-kinds': { type: 'string' },
    'burst-sizes': { type: 'string' },
    'owned-sizes': { type: 'string' },
    rates: { type: 'string' },
    'churn-seconds': { type: 'string' },
    'churn-objects': { type: 'string', default: '1000' },
    reps: { type: 'string' },
    workers: { type: 'string', default: '8' },
    'budget-min': { type: 'string' },
    profile: { type: 'boolean', default: false },
    'node-flags': { type: 'string' },
    'before-node-flags': { type: 'string' },
    'burst-idle-ms': { type: 'string' },
    'webhook-rates': { type: 'string' },
    'webhook-seconds': { type: 'string' },
    'webhook-concurrency': { type: 'string', default: '64' },
    'e2e-rates': { type: 'string' },
    'conversion-objects': { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (opts.help) {
  console.log(`node bench/run.mjs [options]   (build first: npm run build; or npm run bench -- [options])
  --mode MODE              operators (default: sync, burst, churn of the reconcile) or webhooks (admission
                           and conversion webhooks: Nestor, Nestor in a Nest app, controller-runtime)
  --quick                  sync 1k, burst 1k, churn 100 and 500/s for 10 s, one repetition
                           (webhooks: 500 and 1000/s for 5 s, e2e 100/s, a LIST of 1,000, one repetition)
  --scenarios LIST         sync,burst,churn (default all), owned (only when named); webhooks mode: admission,e2e,conversion
  --impls LIST             ${ALL_IMPLS.join(',')} (default all); also ${OPTIONAL_IMPLS.join(',')}
                           (the -before ones: the operator of the checkout NESTOR_BEFORE names, built);
                           webhooks mode: ${WEBHOOK_IMPLS.join(',')}; also ${OPTIONAL_WEBHOOK_IMPLS.join(',')}
  --sizes LIST             initial-sync sizes (default 1000,10000,50000,100000; 50000 only with >= 8 GiB
                           RAM, 100000 with >= 16 GiB; a size the machine's memory cannot hold is refused)
  --sync-kinds LIST        what the sync caches: configmap (built-in, protobuf), widget (a custom resource,
                           JSON), each ~1 KiB (default configmap,widget; quick configmap)
  --burst-sizes LIST       burst sizes (default 1000,10000)
  --burst-idle-ms N        each burst waits N ms after its operator is ready (default 0: at once), so an
                           operator that gave memory back while idle (HeapRelease) meets the burst
  --owned-sizes LIST       owned: ConfigMaps owned by ${OWNERS} Widgets and never read, RSS ${IDLE_MS / 1000} s after ready
                           (default 10000,100000; quick 1000)
  --rates LIST             churn rates per second (default 50,100,500,1000; rates above 500 only if the
                           API server alone held the rate before)
  --churn-seconds N        length of each churn run (default 20; quick 10)
  --churn-objects N        Widgets the churn updates round-robin (default 1000)
  --reps N                 repetitions of the cheap cases: every sync, burst at 1k, churn at <= 100/s (default 3; quick 1)
  --workers N              concurrent reconciles of every implementation (default 8)
  --budget-min N           stop starting runs after N minutes (default 60; quick 15); hard stop 10 min later
  --profile                V8 CPU profiles of the Node operators' measured windows, first repetition
                           (bench/results/profiles; summarize with node bench/profile.mjs FILE)
  --node-flags=FLAGS       V8/Node flags of the Node operators (default "${DEFAULT_NODE_FLAGS}", as the
                           Deployment that nestor manifests writes; "" for Node's defaults)
  --before-node-flags=FLAGS  the -before implementations' flags instead (NESTOR_BEFORE may name this
                           checkout: the same build under two sets of flags, in turns)
  --webhook-rates LIST     webhooks: reviews/s posted to each server, open loop (default 500,1000,2000; then
                           a closed-loop maximum); a rate not held ends the series
  --webhook-seconds N      webhooks: length of each measured run (default 10; quick 5)
  --webhook-concurrency N  webhooks: reviews in flight in the maximum-throughput run (default 64)
  --e2e-rates LIST         webhooks: dry-run creates/s through the API server (default 100,300)
  --conversion-objects N   webhooks: Widgets in the converted LIST (default 5000; quick 1000)
  --out FILE               result JSON path (default bench/results/<date>[-webhooks][-quick].json)`);
  process.exit(0);
}

const list = (s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const numbers = (s) => list(s).map(Number);
const quick = opts.quick;
const webhookMode = opts.mode === 'webhooks';
if (!['operators', 'webhooks'].includes(opts.mode)) {
  console.error(`--mode ${opts.mode}: use operators or webhooks`);
  process.exit(64);
}
const memoryGiB = os.totalmem() / 2 ** 30;
const config = {
  quick,
  mode: opts.mode,
  scenarios: list(opts.scenarios ?? (webhookMode ? 'admission,e2e,conversion' : 'sync,burst,churn')),
  impls: list(opts.impls ?? (webhookMode ? WEBHOOK_IMPLS : ALL_IMPLS).join(',')).filter((i) =>
    webhookMode
      ? WEBHOOK_IMPLS.includes(i) || OPTIONAL_WEBHOOK_IMPLS.includes(i)
      : ALL_IMPLS.includes(i) || OPTIONAL_IMPLS.includes(i),
  ),
  syncSizes: opts.sizes
    ? numbers(opts.sizes)
    : quick
      ? [1000]
      : memoryGiB >= 16
        ? [1000, 10000, 50000, 100000]
        : memoryGiB >= 8
          ? [1000, 10000, 50000]
          : [1000, 10000],
  syncKinds: list(opts['sync-kinds'] ?? (quick ? 'configmap' : 'configmap,widget')),
  burstSizes: opts['burst-sizes'] ? numbers(opts['burst-sizes']) : quick ? [1000] : [1000, 10000],
  ownedSizes: opts['owned-sizes'] ? numbers(opts['owned-sizes']) : quick ? [1000] : [10000, 100000],
  ownedOwners: OWNERS,
  ownedIdleMs: IDLE_MS,
  rates: opts.rates ? numbers(opts.rates) : quick ? [100, 500] : [50, 100, 500, 1000],
  churnSeconds: Number(opts['churn-seconds'] ?? (quick ? 10 : 20)),
  churnObjects: Number(opts['churn-objects']),
  smallReps: Number(opts.reps ?? (quick ? 1 : 3)),
  workers: Number(opts.workers),
  budgetMin: Number(opts['budget-min'] ?? (quick ? 15 : 60)),
  profile: opts.profile,
  createConcurrency: 32,
  nodeFlags: list((opts['node-flags'] ?? DEFAULT_NODE_FLAGS).replace(/\s+/g, ',')),
  burstIdleMs: Number(opts['burst-idle-ms'] ?? 0),
  beforeNodeFlags:
    opts['before-node-flags'] === undefined ? undefined : list(opts['before-node-flags'].replace(/\s+/g, ',')),
  ...(webhookMode
    ? {
        webhookRates: opts['webhook-rates'] ? numbers(opts['webhook-rates']) : quick ? [500, 1000] : [500, 1000, 2000],
        webhookSeconds: Number(opts['webhook-seconds'] ?? (quick ? 5 : 10)),
        webhookConcurrency: Number(opts['webhook-concurrency']),
        webhookReps: Number(opts.reps ?? (quick ? 1 : 2)),
        e2eRates: opts['e2e-rates'] ? numbers(opts['e2e-rates']) : quick ? [100] : [100, 300],
        conversionObjects: Number(opts['conversion-objects'] ?? (quick ? 1000 : 5000)),
        conversionReps: Number(opts.reps ?? (quick ? 1 : 3)),
      }
    : {}),
};
const unknownKinds = config.syncKinds.filter((kind) => !SYNC_KINDS[kind]);
if (unknownKinds.length) {
  console.error(`--sync-kinds ${unknownKinds.join(',')}: use ${Object.keys(SYNC_KINDS).join(',')}`);
  process.exit(64);
}
/**
 * Memory the sync scenario needs at its largest size, all kinds in one namespace: the API
 * server's watch cache and etcd hold every object, the operator caches one kind (measured
 * with 100,000 ConfigMaps and 100,000 Widgets: GIB_PER_100K_SYNCED a kind, peak).
 */
const GIB_PER_100K_SYNCED = 2;
if (config.scenarios.includes('sync') && !webhookMode) {
  const needGiB = (Math.max(0, ...config.syncSizes) / 100_000) * GIB_PER_100K_SYNCED * config.syncKinds.length + 2;
  if (needGiB > memoryGiB * 0.8) {
    console.error(
      `--sizes ${config.syncSizes.join(',')} with ${config.syncKinds.join(',')}: needs about ${needGiB.toFixed(0)} GiB ` +
        `of RAM, this machine has ${memoryGiB.toFixed(0)}; use smaller sizes or fewer --sync-kinds`,
    );
    process.exit(64);
  }
}
/** The longest an operator may take to list and cache the largest sync. */
const SYNC_TIMEOUT_MS = Math.max(600_000, Math.max(0, ...config.syncSizes) * 10);
const repsFor = (scenario, n) =>
  scenario === 'sync' || (scenario === 'churn' ? n <= 100 : n <= 1000) ? config.smallReps : 1;
/** Rates above this run only if the API server alone held the previous rate. */
const UNCONDITIONAL_RATE = 500;

const startedAt = Date.now();
const stamp = new Date()
  .toISOString()
  .replace(/:\d\d\.\d+Z$/, '')
  .replace(':', '');
const outJson =
  opts.out ?? join(here, 'results', `${stamp}${webhookMode ? '-webhooks' : ''}${quick ? '-quick' : ''}.json`);
const profileDir = join(here, 'results', 'profiles');
const log = (line) => console.error(`[bench ${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const overBudget = () => Date.now() - startedAt > config.budgetMin * 60_000;

const doc = {
  startedAt: new Date(startedAt).toISOString(),
  machine: {},
  config,
  runs: { sync: [], burst: [], churn: [], owned: [], admission: [], e2e: [], conversion: [], conversionDirect: [] },
  skipped: [],
  summary: {},
};

// ---- life cycle: bounded in time, never leaves processes behind ----

let env;
let finishing = false;
async function finish(code) {
  if (finishing) return;
  finishing = true;
  killAllChildren();
  try {
    await writeResults();
  } catch (error) {
    console.error(`could not write the results: ${error.message}`);
  }
  await env?.stop().catch(() => {});
  process.exit(code);
}
process.on('SIGINT', () => void finish(130));
process.on('SIGTERM', () => void finish(143));
const hardStop = setTimeout(
  () => {
    log(`hard time limit (${config.budgetMin + 10} min) reached: writing partial results and stopping`);
    void finish(2);
  },
  (config.budgetMin + 10) * 60_000,
);
hardStop.unref();

// ---- the machine ----

function machine(kubernetes) {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  const go = spawnSync(goCommand(), ['version'], { encoding: 'utf8' }).stdout?.trim();
  const kubeRs = config.impls.includes('kube-rs')
    ? {
        rustc: spawnSync(cargoCommand().replace(/cargo$/, 'rustc'), ['--version'], { encoding: 'utf8' }).stdout?.trim(),
        kubeRs: crateVersion('kube'),
        k8sOpenapi: crateVersion('k8s-openapi'),
      }
    : {};
  const clientNode = JSON.parse(
    readFileSync(join(here, '..', 'node_modules', '@kubernetes', 'client-node', 'package.json'), 'utf8'),
  ).version;
  return {
    nproc: os.availableParallelism(),
    cpuModel: model,
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    kubernetes,
    go,
    controllerRuntime: controllerRuntimeVersion(),
    ...kubeRs,
    clientNode,
    loadAverageAtStart: os.loadavg().map((l) => Number(l.toFixed(2))),
  };
}

// ---- helpers ----

let load; // the load generator's transport
let goBinary;
let kubeRsBinary;

const controlPlaneCpu = () => env.pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);

/**
 * Waits until the control plane is nearly idle (under 10% of a core over half a second),
 * at most 30 s: after thousands of writes the API server and etcd keep working for a while
 * (watch cache, compaction, GC), and the next run should not pay for the previous one.
 */
async function settle() {
  const deadline = Date.now() + 30_000;
  for (let before = controlPlaneCpu(); Date.now() < deadline;) {
    await sleep(500);
    const now = controlPlaneCpu();
    if (now - before < 0.05) return;
    before = now;
  }
}

async function startOperator(impl, namespace, mode, profileName, extraArgs = []) {
  return OperatorProcess.start(impl, {
    kubeconfig: env.kubeconfigPath,
    namespace,
    mode,
    workers: config.workers,
    goBinary,
    kubeRsBinary,
    nodeFlags: impl.endsWith('-before') ? (config.beforeNodeFlags ?? config.nodeFlags) : config.nodeFlags,
    extraArgs,
    ...(profileName && NODE_IMPLS.includes(impl)
      ? { profile: join(profileDir, `${profileName}-${impl}.cpuprofile`) }
      : {}),
  });
}

/** Deletes every Widget and ConfigMap of a namespace (no controller-manager runs to do it). */
async function emptyNamespace(ns) {
  for (const path of [widgetsPath(ns), configMapsPath(ns)]) {
    await load
      .json('DELETE', path, { timeoutMs: 600_000 })
      .catch((error) => log(`cleanup of ${path}: ${error.message}`));
  }
}

function widgetBody(ns, name) {
  return {
    apiVersion: 'bench.nestor.dev/v1',
    kind: 'Widget',
    metadata: { name, namespace: ns },
    spec: { size: 1, round: 0 },
  };
}

/** The implementations in a different order each repetition, so drift on a shared machine spreads. */
const rotated = (rep) => config.impls.map((_, i) => config.impls[(i + rep) % config.impls.length]);

// ---- scenario: initial sync ----

async function scenarioSync() {
  const ns = await env.createNamespace('sync');
  // Objects of each kind created so far: each size adds to the last.
  const existing = Object.fromEntries(config.syncKinds.map((kind) => [kind, 0]));
  for (const size of config.syncSizes) {
    for (const kind of config.syncKinds) {
      if (overBudget()) {
        doc.skipped.push(`sync ${size} ${kind}: over the time budget`);
        continue;
      }
      const { label, path, body } = SYNC_KINDS[kind];
      log(`sync: creating ${label} ${existing[kind]}..${size - 1}`);
      const names = Array.from({ length: size - existing[kind] }, (_, i) => `${kind}-${existing[kind] + i}`);
      const t = Date.now();
      await parallel(names, config.createConcurrency, (name) => load.json('POST', path(ns), { body: body(name) }));
      if (names.length) log(`sync: ${names.length} created in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      existing[kind] = size;
      await syncRuns(ns, kind, size);
    }
  }
}

/** Each implementation started, synced (one informer of `kind`) and measured, `reps` times. */
async function syncRuns(ns, kind, size) {
  const reps = repsFor('sync', size);
  for (let rep = 0; rep < reps; rep++) {
    for (const impl of rotated(rep)) {
      const what = `sync ${size} ${kind} ${impl}`;
      if (overBudget()) {
        doc.skipped.push(`${what} rep ${rep + 1}: over the time budget`);
        continue;
      }
      const profile = config.profile && rep === 0 ? `${stamp}-sync-${kind}-${size}` : undefined;
      let op;
      try {
        await settle();
        op = await startOperator(impl, ns, 'sync', profile, ['--sync-kind', kind]);
        const cp0 = controlPlaneCpu();
        const synced = await op.ask({ cmd: 'start' }, 'synced', SYNC_TIMEOUT_MS);
        const cp1 = controlPlaneCpu();
        if (synced.objects !== size) throw new Error(`${impl} cached ${synced.objects} objects, expected ${size}`);
        const run = {
          impl,
          kind,
          size,
          rep: rep + 1,
          objects: synced.objects,
          syncMs: synced.syncUs / 1000,
          cpuMs: synced.cpuUs / 1000,
          heapPerObject: (synced.after.heap - synced.before.heap) / size,
          rssPerObject: (synced.after.rss - synced.before.rss) / size,
          rssBeforeMB: synced.before.rss / 2 ** 20,
          rssAfterMB: synced.after.rss / 2 ** 20,
          heapAfterMB: synced.after.heap / 2 ** 20,
          controlPlaneCpuMs: (cp1 - cp0) * 1000,
          // The API server's watch cache and etcd hold every object of every kind: the memory guard's figure.
          controlPlaneRssMB: env.pids.reduce((sum, pid) => sum + processMemory(pid).rss, 0) / 2 ** 20,
          profiled: Boolean(profile) && NODE_IMPLS.includes(impl),
        };
        doc.runs.sync.push(run);
        log(
          `${what}: ${run.syncMs.toFixed(0)} ms, CPU ${run.cpuMs.toFixed(0)} ms, ` +
            `heap ${run.heapPerObject.toFixed(0)} B/object, RSS ${run.rssAfterMB.toFixed(0)} MB, ` +
            `apiserver+etcd CPU ${run.controlPlaneCpuMs.toFixed(0)} ms`,
        );
      } catch (error) {
        log(`${what} failed: ${error.message}`);
        doc.skipped.push(`${what} rep ${rep + 1}: ${error.message.split('\n')[0]}`);
      } finally {
        await op?.stop();
      }
    }
  }
}

// ---- scenario: burst ----

/**
 * RSS and CPU of a process every 250 ms from /proc (a read of two small files, in this
 * process, not the operator's), until stop(): [seconds, RSS MB, CPU seconds used since the
 * start], at most 400 points (every other one dropped as it grows).
 */
function sampleProcess(pid) {
  const startedAt = performance.now();
  const cpu0 = processCpuSeconds(pid);
  let every = 1;
  let tick = 0;
  const series = [];
  const take = () => {
    const t = (performance.now() - startedAt) / 1000;
    series.push([
      +t.toFixed(2),
      +(processMemory(pid).rss / 2 ** 20).toFixed(1),
      +(processCpuSeconds(pid) - cpu0).toFixed(2),
    ]);
    if (series.length > 400) {
      for (let i = series.length - 1; i > 0; i -= 2) series.splice(i, 1);
      every *= 2;
    }
  };
  take();
  const timer = setInterval(() => tick++ % every === 0 && take(), 250);
  return {
    stop() {
      clearInterval(timer);
      take();
      return series;
    },
  };
}

async function scenarioBurst() {
  for (const size of config.burstSizes) {
    const reps = repsFor('burst', size);
    for (let rep = 0; rep < reps; rep++) {
      for (const impl of rotated(rep)) {
        if (overBudget()) {
          doc.skipped.push(`burst ${size} ${impl} rep ${rep + 1}: over the time budget`);
          continue;
        }
        const ns = await env.createNamespace('burst');
        const profile = config.profile && rep === 0 ? `${stamp}-burst-${size}` : undefined;
        let op;
        try {
          await settle();
          op = await startOperator(impl, ns, 'reconcile', profile);
          const ready = await op.next('ready', 120_000);
          if (config.burstIdleMs > 0) await sleep(config.burstIdleMs);
          const marked = await op.ask({ cmd: 'mark' }, 'marked');
          const all = op.next('all', Math.max(180_000, size * 40));
          op.send({ cmd: 'expect', n: size });
          const cp0 = controlPlaneCpu();
          const t0 = nowUs();
          const sampling = sampleProcess(op.pid);
          const names = Array.from({ length: size }, (_, i) => `widget-${i}`);
          await parallel(names, config.createConcurrency, async (name) => {
            const created = await load.json('POST', widgetsPath(ns), { body: widgetBody(ns, name) });
            if (impl === 'apiserver') {
              const { uid, generation } = created.metadata;
              op.send({ cmd: 'obj', name, uid, generation, size: 1, round: 0 });
            }
          });
          const createdAt = nowUs();
          const done = await all;
          const series = sampling.stop();
          const cp1 = controlPlaneCpu();
          const stats = await op.ask({ cmd: 'stats', lite: true }, 'stats');
          const wallMs = (done.at - t0) / 1000;
          const cpuSeconds = (stats.cpuUs - marked.cpuUs) / 1e6;
          const run = {
            impl,
            size,
            rep: rep + 1,
            wallMs,
            // Process start to ready: module loading, bootstrap, discovery, the first LIST (Node operators).
            startupMs: ready.startupMs,
            importedMs: ready.importedMs,
            createMs: (createdAt - t0) / 1000,
            reconcilesPerSecond: size / (wallMs / 1000),
            reconciles: done.reconciles,
            cpuSeconds,
            cpuSecondsPer1k: (cpuSeconds / size) * 1000,
            controlPlaneCpuPer1k: ((cp1 - cp0) / size) * 1000,
            maxRssMB: stats.maxRss / 2 ** 20,
            rssMB: stats.rss / 2 ** 20,
            profiled: Boolean(profile) && NODE_IMPLS.includes(impl),
            // [seconds since the first create, RSS MB, CPU seconds since then] (the charts).
            series,
          };
          doc.runs.burst.push(run);
          log(
            `burst ${size} ${impl}: all reconciled in ${wallMs.toFixed(0)} ms (creates took ${run.createMs.toFixed(0)} ms), ` +
              `${run.reconcilesPerSecond.toFixed(0)}/s, CPU ${cpuSeconds.toFixed(2)} s, peak RSS ${run.maxRssMB.toFixed(0)} MB`,
          );
        } catch (error) {
          log(`burst ${size} ${impl} failed: ${error.message}`);
          doc.skipped.push(`burst ${size} ${impl} rep ${rep + 1}: ${error.message.split('\n')[0]}`);
        } finally {
          await op?.stop();
          await emptyNamespace(ns);
        }
      }
    }
  }
}

// ---- scenario: steady churn ----

/**
 * Open-loop writes at `rate`/s for `seconds`: each a merge patch of one Widget's spec (so its
 * generation moves) with the write time in an annotation. A write that would exceed 256 in
 * flight is dropped and counted as missed, so the offered schedule never bunches up.
 */
async function generate(ns, widgets, rate, seconds, op) {
  const names = [...widgets.keys()];
  const writeLatUs = [];
  let issued = 0;
  let missed = 0;
  let failed = 0;
  let inFlight = 0;
  let cursor = 0;
  const pending = new Set();
  const fire = () => {
    const name = names[cursor++ % names.length];
    const widget = widgets.get(name);
    const round = ++widget.round;
    const writtenAt = String(nowUs());
    inFlight++;
    issued++;
    const write = load
      .json('PATCH', widgetsPath(ns, name), {
        body: { metadata: { annotations: { [WRITTEN_AT]: writtenAt } }, spec: { round } },
        contentType: 'application/merge-patch+json',
      })
      .then(
        (updated) => {
          writeLatUs.push(nowUs() - Number(writtenAt));
          if (op) {
            const { uid, generation } = updated.metadata;
            op.send({ cmd: 'obj', name, uid, generation, size: 1, round, writtenAt });
          }
        },
        () => failed++,
      )
      .finally(() => {
        inFlight--;
        pending.delete(write);
      });
    pending.add(write);
  };
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let due = 0;
  for (let now = t0; now < end; now = performance.now()) {
    const target = Math.floor(((now - t0) * rate) / 1000);
    for (; due < target; due++) {
      if (inFlight < 256) fire();
      else missed++;
    }
    await sleep(1);
  }
  const elapsed = (performance.now() - t0) / 1000;
  await Promise.all(pending);
  writeLatUs.sort((a, b) => a - b);
  return { issued, missed, failed, elapsed, writeLatUs };
}

/** Waits until the operator has been idle (nothing in flight, no new reconcile) for a second. */
async function drain(op, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let quiet = 0;
  while (Date.now() < deadline) {
    const s = await op.ask({ cmd: 'stats', lite: true }, 'stats');
    if (s.inFlight === 0 && s.reconciles === last) {
      if (++quiet >= 2) return true;
    } else quiet = 0;
    last = s.reconciles;
    await sleep(500);
  }
  return false;
}

/** A rate holds when every write went out on schedule and the reconciles kept up (p99 under a second). */
function held(rate) {
  const runs = doc.runs.churn.filter((r) => r.rate === rate && r.impl === 'apiserver');
  return runs.length > 0 && runs.every((r) => r.missed === 0 && r.achievedRate >= 0.95 * rate && r.p99Ms < 1000);
}

async function scenarioChurn() {
  const ns = await env.createNamespace('churn');
  const widgets = new Map();
  const names = Array.from({ length: config.churnObjects }, (_, i) => `widget-${i}`);
  await parallel(names, config.createConcurrency, async (name) => {
    await load.json('POST', widgetsPath(ns), { body: widgetBody(ns, name) });
    widgets.set(name, { round: 0 });
  });
  log(`churn: ${names.length} Widgets created`);
  let previous;
  for (const rate of config.rates) {
    if (rate > UNCONDITIONAL_RATE && previous !== undefined && !held(previous)) {
      doc.skipped.push(`churn ${rate}/s: the API server alone did not hold ${previous}/s on this machine`);
      log(`churn ${rate}/s skipped: the API server alone did not hold ${previous}/s`);
      previous = rate;
      continue;
    }
    previous = rate;
    const reps = repsFor('churn', rate);
    for (let rep = 0; rep < reps; rep++) {
      for (const impl of rotated(rep)) {
        if (overBudget()) {
          doc.skipped.push(`churn ${rate}/s ${impl} rep ${rep + 1}: over the time budget`);
          continue;
        }
        const profile = config.profile && rep === 0 ? `${stamp}-churn-${rate}` : undefined;
        let op;
        try {
          op = await startOperator(impl, ns, 'reconcile', profile);
          await op.next('ready', 120_000);
          if (impl !== 'apiserver') {
            // The initial list reconciles every Widget once: wait for that before measuring.
            const all = op.next('all', 180_000);
            op.send({ cmd: 'expect', n: names.length });
            await all;
            await drain(op);
          }
          await settle();
          const marked = await op.ask({ cmd: 'mark' }, 'marked');
          const cp0 = controlPlaneCpu();
          // RSS every 10 s: whether memory stays flat under churn, not only its peak.
          const rssSeriesMB = [];
          const sampler = setInterval(() => {
            op.ask({ cmd: 'stats', lite: true }, 'stats')
              .then((s) => rssSeriesMB.push(Math.round((s.rss / 2 ** 20) * 10) / 10))
              .catch(() => {});
          }, 10_000);
          let gen;
          try {
            gen = await generate(ns, widgets, rate, config.churnSeconds, impl === 'apiserver' ? op : undefined);
          } finally {
            clearInterval(sampler);
          }
          const drained = await drain(op);
          const cp1 = controlPlaneCpu();
          const stats = await op.ask({ cmd: 'stats' }, 'stats');
          const lat = stats.latUs.sort((a, b) => a - b);
          const cpuSeconds = (stats.cpuUs - marked.cpuUs) / 1e6;
          const events = gen.issued - gen.failed;
          const run = {
            impl,
            rate,
            rep: rep + 1,
            achievedRate: events / gen.elapsed,
            issued: gen.issued,
            missed: gen.missed,
            failed: gen.failed,
            reconciles: stats.reconciles,
            latencySamples: lat.length,
            p50Ms: percentile(lat, 50) / 1000,
            p95Ms: percentile(lat, 95) / 1000,
            p99Ms: percentile(lat, 99) / 1000,
            maxMs: lat.at(-1) / 1000,
            writeP50Ms: percentile(gen.writeLatUs, 50) / 1000,
            writeP99Ms: percentile(gen.writeLatUs, 99) / 1000,
            cpuSeconds,
            cpuSecondsPer1k: (cpuSeconds / events) * 1000,
            controlPlaneCpuPer1k: ((cp1 - cp0) / events) * 1000,
            maxRssMB: stats.maxRss / 2 ** 20,
            rssEndMB: stats.rss / 2 ** 20,
            rssSeriesMB,
            drained,
            held: gen.missed === 0 && events / gen.elapsed >= 0.95 * rate && percentile(lat, 99) < 1e6 ? 1 : 0,
            profiled: Boolean(profile) && NODE_IMPLS.includes(impl),
          };
          doc.runs.churn.push(run);
          log(
            `churn ${rate}/s ${impl}: ${run.achievedRate.toFixed(0)} writes/s (${gen.missed} missed), ` +
              `${run.reconciles} reconciles, latency p50 ${run.p50Ms.toFixed(1)} / p95 ${run.p95Ms.toFixed(1)} / ` +
              `p99 ${run.p99Ms.toFixed(1)} ms, CPU ${run.cpuSecondsPer1k.toFixed(2)} s/1k, ` +
              `write p50 ${run.writeP50Ms.toFixed(1)} ms${drained ? '' : ' (did not drain)'}`,
          );
        } catch (error) {
          log(`churn ${rate}/s ${impl} failed: ${error.message}`);
          doc.skipped.push(`churn ${rate}/s ${impl} rep ${rep + 1}: ${error.message.split('\n')[0]}`);
        } finally {
          await op?.stop();
        }
      }
    }
  }
}

// ---- results ----

function summarizeAll() {
  const group = (runs, keyOf, metrics) => {
    const groups = new Map();
    for (const run of runs) {
      const key = keyOf(run);
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(run);
    }
    return [...groups.values()].map((rs) => ({
      ...(rs[0].kind !== undefined ? { kind: rs[0].kind } : {}),
      ...(rs[0].size !== undefined ? { size: rs[0].size } : {}),
      ...(rs[0].rate !== undefined ? { rate: rs[0].rate } : {}),
      impl: rs[0].impl,
      stats: { runs: rs.length, ...summarize(rs, metrics) },
    }));
  };
  doc.summary = {
    sync: group(doc.runs.sync, (r) => `${r.kind}/${r.size}/${r.impl}`, [
      'syncMs',
      'cpuMs',
      'heapPerObject',
      'rssPerObject',
      'rssBeforeMB',
      'rssAfterMB',
      'heapAfterMB',
      'controlPlaneCpuMs',
    ]),
    burst: group(doc.runs.burst, (r) => `${r.size}/${r.impl}`, [
      'wallMs',
      'startupMs',
      'createMs',
      'reconcilesPerSecond',
      'cpuSeconds',
      'cpuSecondsPer1k',
      'controlPlaneCpuPer1k',
      'maxRssMB',
    ]),
    owned: group(doc.runs.owned, (r) => `${r.size}/${r.impl}`, [
      'rssMB',
      'maxRssMB',
      'anonMB',
      'fileMB',
      'cpuSeconds',
      'heapAfterGcMB',
      'startupMs',
    ]),
    churn: group(doc.runs.churn, (r) => `${r.rate}/${r.impl}`, [
      'achievedRate',
      'p50Ms',
      'p95Ms',
      'p99Ms',
      'maxMs',
      'writeP50Ms',
      'writeP99Ms',
      'cpuSecondsPer1k',
      'controlPlaneCpuPer1k',
      'maxRssMB',
      'rssEndMB',
      'held',
    ]),
    ...summarizeWebhooks(doc.runs),
  };
}

function machineLine() {
  const m = doc.machine;
  return (
    `${m.nproc} × ${m.cpuModel}, ${m.memoryGiB} GiB RAM, ${m.kernel}; Node ${m.node}, Kubernetes ${m.kubernetes}, ` +
    `${m.go}, controller-runtime ${m.controllerRuntime}, ` +
    (m.kubeRs ? `${m.rustc}, kube ${m.kubeRs}, k8s-openapi ${m.k8sOpenapi}, ` : '') +
    `client-node ${m.clientNode}; ` +
    `load average at start ${m.loadAverageAtStart?.join(' ')}, at end ${m.loadAverageAtEnd?.join(' ') ?? '?'}`
  );
}

async function writeResults() {
  doc.machine.loadAverageAtEnd = os.loadavg().map((l) => Number(l.toFixed(2)));
  doc.finishedAt = new Date().toISOString();
  doc.durationSeconds = Math.round((Date.now() - startedAt) / 1000);
  summarizeAll();
  const tables = [renderTables(doc), renderWebhookTables(doc)].filter(Boolean).join('\n\n');
  const markdown =
    `## Nestor benchmark ${doc.startedAt}${quick ? ' (quick)' : ''}\n\n${machineLine()}\n\n` +
    `Workers per implementation: ${config.workers}. Values: mean ± sample stddev over the runs column.\n\n${tables}\n` +
    (doc.skipped.length ? `\nSkipped or failed:\n${doc.skipped.map((s) => `- ${s}`).join('\n')}\n` : '');
  await mkdir(dirname(outJson), { recursive: true });
  await writeFile(outJson, JSON.stringify(doc, null, 1) + '\n');
  await writeFile(outJson.replace(/\.json$/, '.md'), markdown + (await writeCharts(outJson, runCharts(doc))));
  console.log(`\n${markdown}`);
  console.log(`results: ${outJson} (and .md)`);
}

// ---- main ----

try {
  log(`config: ${JSON.stringify(config)}`);
  if (config.impls.some((impl) => impl.startsWith('controller-runtime')))
    goBinary = await ensureGoOperator({ onProgress: log });
  if (config.impls.includes('kube-rs')) kubeRsBinary = await ensureKubeRsOperator({ onProgress: log });
  if (config.profile) await mkdir(profileDir, { recursive: true });
  env = await TestEnvironment.start({
    useExistingCluster: false,
    crds: [WIDGET_CRD],
    // The conversion case LISTs from etcd: from the watch cache a LIST is served already
    // converted (objects are converted one by one as they enter the cache) and calls no webhook.
    ...(webhookMode ? { apiServerFlags: [`--watch-cache-sizes=${CONVERSION_RESOURCE}#0`] } : {}),
  });
  const version = await env.client.request('GET', '/version');
  doc.machine = machine(version.gitVersion);
  log(`control plane up at ${env.server}; ${machineLine()}`);
  load = await Transport.fromKubeConfig(env.kubeConfig, { maxSockets: 64, userAgent: 'nestor-bench-load' });
  const webhookContext = { env, load, config, doc, log, overBudget, settle, controlPlaneCpu, goBinary };
  for (const scenario of config.scenarios) {
    if (scenario === 'sync') await scenarioSync();
    else if (scenario === 'burst') await scenarioBurst();
    else if (scenario === 'churn') await scenarioChurn();
    else if (scenario === 'owned')
      await scenarioOwned({
        env,
        load,
        config,
        doc,
        log,
        overBudget,
        settle,
        startOperator,
        rotated,
        emptyNamespace,
      });
    else if (scenario === 'admission') await scenarioAdmission(webhookContext);
    else if (scenario === 'e2e') await scenarioApiServerAdmission(webhookContext);
    else if (scenario === 'conversion') await scenarioConversion(webhookContext);
    else
      throw new Error(
        `unknown scenario ${scenario}: use sync, burst, churn, owned (--mode webhooks: admission, e2e, conversion)`,
      );
  }
  load.close();
  log(
    `done in ${((Date.now() - startedAt) / 60_000).toFixed(1)} min; ${Object.keys(IMPL_LABELS).length} implementations`,
  );
  await finish(0);
} catch (error) {
  console.error(error);
  await finish(1);
}
