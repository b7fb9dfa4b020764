#!/usr/bin/env node
// Storage-version migration (docs/upgrades.md) on a control plane of its own: N Widgets
// (default 10,000, each with a --payload of bytes) stored in one version; while the
// operator (bench/operators/nestor-migrating.mjs) runs, the CRD gets a new storage version,
// and its leader rewrites every object and trims storedVersions. One migration per pace in
// --rates (writes per second, 0 for unpaced), each moving every object on to the next
// version (v1beta1 -> v1 -> v2 ...), and one more without the controller's
// generation-changed predicate (--no-predicate-rate). For each:
//   - objects per second: from the CRD's change to storedVersions trimmed;
//   - the API server's and etcd's CPU (/proc/<pid>/stat) during the migration, against a
//     window of the same churn just before it, and the operator's;
//   - whether reconciles are disturbed: a steady churn of spec changes (--churn per second)
//     to random Widgets, each timed until the controller's status write shows it (p50, p99),
//     before the migration, after a CRD change alone (the new version served, not yet
//     storage: every watch of the kind ends and lists again, as it does when the storage
//     version changes), and during the migration; and the reconciles run during it.
//
//   node bench/migrate.mjs [--objects 10000] [--rates 100,400,0] [--no-predicate-rate 100|none]
//                          [--payload 512] [--churn 20] [--baseline-seconds 15]
//
// Writes bench/results/<date>-migrate.json and .md. Never part of `npm test`.
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { watch } from '@nestor/operator/runtime';
import { freePort, parallel, TestEnvironment } from '@nestor/testing';
import { processCpuSeconds } from './lib/child.mjs';
import { percentile, sleep } from './lib/common.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const GROUP = 'migrate.bench.nestor.dev';
const CRD = `widgets.${GROUP}`;
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`;
const WIDGETS = Object.freeze({
  group: GROUP,
  version: 'v1beta1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

const { values: opts } = parseArgs({
  options: {
    objects: { type: 'string', default: '10000' },
    rates: { type: 'string', default: '100,400,0' },
    'no-predicate-rate': { type: 'string', default: '100' },
    payload: { type: 'string', default: '512' },
    churn: { type: 'string', default: '20' },
    'baseline-seconds': { type: 'string', default: '15' },
  },
});
const OBJECTS = Number(opts.objects);
const CHURN = Number(opts.churn);
const BASELINE_S = Number(opts['baseline-seconds']);
const runs = [
  ...opts.rates.split(',').map((rate) => ({ rate: Number(rate), predicate: true })),
  ...(opts['no-predicate-rate'] === 'none' ? [] : [{ rate: Number(opts['no-predicate-rate']), predicate: false }]),
];
const log = (message) => process.stderr.write(`[migrate bench] ${message}\n`);
const name = (i) => `w-${String(i).padStart(5, '0')}`;
const versionName = (i) => (i === 0 ? 'v1beta1' : `v${i}`);

const schema = {
  openAPIV3Schema: {
    type: 'object',
    properties: {
      spec: { type: 'object', properties: { size: { type: 'integer' }, payload: { type: 'string' } } },
      status: { type: 'object', properties: { observed: { type: 'integer' } } },
    },
  },
};
const version = (v, storage) => ({ name: v, served: true, storage, subresources: { status: {} }, schema });

/** Every Widget's spec.size and status.observed, as the watch last showed them; and the churn's pending changes. */
class Observed {
  sizes = new Map();
  observed = new Map();
  pending = new Map(); // name -> { size, at }
  latencies = [];
  events = 0;

  apply(event) {
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED') return;
    this.events++;
    const { name: key } = event.object.metadata;
    this.sizes.set(key, event.object.spec?.size);
    const observed = event.object.status?.observed;
    this.observed.set(key, observed);
    const change = this.pending.get(key);
    if (change && observed === change.size) {
      this.latencies.push({ at: change.at, ms: performance.now() - change.at });
      this.pending.delete(key);
    }
  }

  get converged() {
    if (this.sizes.size < OBJECTS) return false;
    for (const [key, size] of this.sizes) if (this.observed.get(key) !== size) return false;
    return true;
  }

  /** The latencies recorded since the last call ({ at: when the change was written, ms }). */
  take() {
    const taken = this.latencies;
    this.latencies = [];
    return taken;
  }
}

/** Changes the size of random Widgets, `perSecond`, until stopped; each change timed by `observed`. */
function churn(env, namespace, observed, perSecond) {
  let stopped = false;
  let next = 1_000_000;
  const done = (async () => {
    const interval = 1000 / perSecond;
    let due = performance.now();
    while (!stopped) {
      due += interval;
      const key = name(Math.floor(Math.random() * OBJECTS));
      const size = next++;
      observed.pending.set(key, { size, at: performance.now() });
      void env.client
        .request('PATCH', `/apis/${GROUP}/v1beta1/namespaces/${namespace}/widgets/${key}`, { spec: { size } })
        .catch((error) => log(`churn write failed: ${error.message}`));
      await sleep(Math.max(0, due - performance.now()));
    }
  })();
  return async () => {
    stopped = true;
    await done;
  };
}

/** The operator process: started, ready (caches synced), its /metrics, stopped. */
async function startOperator(env, rate, predicate) {
  const metricsPort = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(here, 'operators', 'nestor-migrating.mjs'),
      '--kubeconfig',
      env.kubeconfigPath,
      '--group',
      GROUP,
      '--metrics-port',
      String(metricsPort),
      '--writes-per-second',
      String(rate),
      '--predicate',
      String(predicate),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stderr.on('data', (chunk) => process.stderr.write(`[operator] ${chunk}`));
  const lines = createInterface({ input: child.stdout });
  await new Promise((resolve, reject) => {
    lines.on('line', (line) => JSON.parse(line).ev === 'ready' && resolve());
    child.once('exit', (code) => reject(new Error(`the operator exited (${code}) before it was ready`)));
  });
  return {
    pid: child.pid,
    async metrics() {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const sum = (metric, labels = '') =>
        text
          .split('\n')
          .filter((line) => line.startsWith(metric) && line.includes(labels))
          .reduce((total, line) => total + Number(line.split(' ').pop()), 0);
      return {
        reconciles: sum('controller_runtime_reconcile_total{', 'controller="widgets"'),
        rewritten: sum('nestor_storage_version_migration_objects_total{', 'result="rewritten"'),
        current: sum('nestor_storage_version_migration_objects_total{', 'result="current"'),
        gone: sum('nestor_storage_version_migration_objects_total{', 'result="gone"'),
        failed: sum('nestor_storage_version_migration_objects_total{', 'result="failed"'),
      };
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000).then(() => child.kill('SIGKILL'))]);
    },
  };
}

/** CPU seconds of etcd, kube-apiserver and the operator so far. */
function cpu(env, operator) {
  const [etcd, apiserver] = env.pids;
  return {
    etcd: processCpuSeconds(etcd),
    apiserver: processCpuSeconds(apiserver),
    operator: processCpuSeconds(operator.pid),
  };
}

const cores = (before, after, seconds) => ({
  apiserver: (after.apiserver - before.apiserver) / seconds,
  etcd: (after.etcd - before.etcd) / seconds,
  operator: (after.operator - before.operator) / seconds,
});

/** p50, p99 and max of the latencies of the changes written in [from, to). */
function latencySummary(samples, from = -Infinity, to = Infinity) {
  const sorted = samples
    .filter((sample) => sample.at >= from && sample.at < to)
    .map((sample) => sample.ms)
    .sort((a, b) => a - b);
  return {
    changes: sorted.length,
    p50Ms: sorted.length ? percentile(sorted, 50) : NaN,
    p99Ms: sorted.length ? percentile(sorted, 99) : NaN,
    maxMs: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

/** The CRD with a change of its versions' list: `to` added, made storage or not. */
async function changeVersions(env, to, storage) {
  const crd = await env.client.request('GET', CRD_PATH);
  const others = crd.spec.versions.filter((v) => v.name !== to);
  crd.spec.versions = [...others.map((v) => ({ ...v, storage: storage ? false : v.storage })), version(to, storage)];
  await env.client.request('PUT', CRD_PATH, crd);
}

/** How long the first changes after a CRD change wait: every watch of the kind ends and lists again. */
const SETTLE_MS = 20_000;

async function main() {
  const started = new Date();
  log(
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} on ${os.cpus().length} cores`,
  );
  const env = await TestEnvironment.start({ useExistingCluster: false, controllerManager: false });
  const results = [];
  try {
    const namespace = await env.createNamespace('migrate');
    await env.installCRDs([
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: CRD },
        spec: {
          group: GROUP,
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [version('v1beta1', true)],
        },
      },
    ]);
    const creating = Date.now();
    const payload = 'x'.repeat(Number(opts.payload));
    await parallel(
      Array.from({ length: OBJECTS }, (_, i) => i),
      32,
      (i) =>
        env.client.request('POST', `/apis/${GROUP}/v1beta1/namespaces/${namespace}/widgets`, {
          apiVersion: `${GROUP}/v1beta1`,
          kind: 'Widget',
          metadata: { name: name(i) },
          spec: { size: 1, payload },
        }),
    );
    log(`created ${OBJECTS} Widgets in ${((Date.now() - creating) / 1000).toFixed(1)} s`);
    const observed = new Observed();
    const watching = watch(env.client.transport, WIDGETS, { namespace }).subscribe((event) => observed.apply(event));

    for (const [i, run] of runs.entries()) {
      const [from, to] = [versionName(i), versionName(i + 1)];
      log(
        `run ${i + 1}/${runs.length}: ${from} -> ${to}, ${run.rate || 'unpaced'} writes/s, predicate ${run.predicate}`,
      );
      const operator = await startOperator(env, run.rate, run.predicate);
      for (let waited = 0; !observed.converged; waited += 500) {
        if (waited > 600_000) throw new Error('the controller did not converge within 10 min');
        await sleep(500);
      }
      const stopChurn = churn(env, namespace, observed, CHURN);
      // Baseline: the same churn, no migration.
      await sleep(2000);
      observed.take();
      let [cpu0, metrics0, t0] = [cpu(env, operator), await operator.metrics(), performance.now()];
      await sleep(BASELINE_S * 1000);
      const [cpu1, metrics1, t1] = [cpu(env, operator), await operator.metrics(), performance.now()];
      const baseline = {
        seconds: (t1 - t0) / 1000,
        cores: cores(cpu0, cpu1, (t1 - t0) / 1000),
        reconciles: metrics1.reconciles - metrics0.reconciles,
        latency: latencySummary(observed.take()),
      };
      // A CRD change alone: `to` served, not storage. The API server rebuilds the kind's
      // storage, and every watch of it ends and lists again: what the storage change costs by itself.
      [cpu0, metrics0, t0] = [cpu(env, operator), await operator.metrics(), performance.now()];
      await changeVersions(env, to, false);
      await sleep(SETTLE_MS + 10_000);
      const [cpuC, metricsC, tC] = [cpu(env, operator), await operator.metrics(), performance.now()];
      const crdChangeSamples = observed.take();
      const crdChange = {
        seconds: (tC - t0) / 1000,
        cores: cores(cpu0, cpuC, (tC - t0) / 1000),
        reconciles: metricsC.reconciles - metrics0.reconciles,
        latency: latencySummary(crdChangeSamples),
        latencyFirst20s: latencySummary(crdChangeSamples, t0, t0 + SETTLE_MS),
        latencyAfter20s: latencySummary(crdChangeSamples, t0 + SETTLE_MS),
      };
      // The migration: `to` becomes the storage version while the operator runs.
      [cpu0, metrics0, t0] = [cpu(env, operator), await operator.metrics(), performance.now()];
      await changeVersions(env, to, true);
      for (;;) {
        const stored = (await env.client.request('GET', CRD_PATH)).status.storedVersions;
        if (stored.length === 1 && stored[0] === to) break;
        if (performance.now() - t0 > 900_000) throw new Error('no migration within 15 min');
        await sleep(200);
      }
      const [cpu2, metrics2, t2] = [cpu(env, operator), await operator.metrics(), performance.now()];
      await stopChurn();
      const seconds = (t2 - t0) / 1000;
      const samples = observed.take();
      const migration = {
        seconds,
        objectsPerSecond: OBJECTS / seconds,
        rewritten: metrics2.rewritten - metrics0.rewritten,
        current: metrics2.current - metrics0.current,
        gone: metrics2.gone - metrics0.gone,
        failed: metrics2.failed - metrics0.failed,
        cores: cores(cpu0, cpu2, seconds),
        cpuSeconds: {
          apiserver: cpu2.apiserver - cpu0.apiserver,
          etcd: cpu2.etcd - cpu0.etcd,
          operator: cpu2.operator - cpu0.operator,
        },
        reconciles: metrics2.reconciles - metrics0.reconciles,
        latency: latencySummary(samples),
        latencyFirst20s: latencySummary(samples, t0, t0 + SETTLE_MS),
        latencyAfter20s: latencySummary(samples, t0 + SETTLE_MS),
      };
      await operator.stop();
      const result = { ...run, from, to, loadAverage: os.loadavg()[0], baseline, crdChange, migration };
      results.push(result);
      log(JSON.stringify(result));
    }
    watching.unsubscribe();
  } finally {
    await env.stop();
  }
  await report(started, results);
}

async function report(started, results) {
  const stamp = started.toISOString().slice(0, 16).replace(/:/g, '');
  const folder = join(here, 'results');
  await mkdir(folder, { recursive: true });
  const meta = {
    date: started.toISOString(),
    objects: OBJECTS,
    payloadBytes: Number(opts.payload),
    churnPerSecond: CHURN,
    machine: `${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.cpus()[0]?.model ?? ''}`,
    node: process.version,
  };
  await writeFile(join(folder, `${stamp}-migrate.json`), JSON.stringify({ ...meta, results }, null, 2) + '\n');
  const f = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
  const pct = (n) => `${f(n * 100)} %`;
  const lines = [
    `# Storage-version migration: ${OBJECTS.toLocaleString('en-US')} Widgets (${meta.payloadBytes} B payload each)`,
    '',
    `${meta.date}, ${meta.machine}, Node ${meta.node}. \`node bench/migrate.mjs --objects ${OBJECTS} --rates ${opts.rates} ` +
      `--no-predicate-rate ${opts['no-predicate-rate']} --churn ${CHURN}\`. One control plane (etcd, kube-apiserver, no ` +
      'kube-controller-manager); each run moves every object to the next version while the operator runs, with a churn of ' +
      `${CHURN} spec changes/s to random Widgets that its controller writes back to status.observed. CPU in cores (1 = one ` +
      'core busy), from /proc/<pid>/stat over the window; "before" is the same churn for ' +
      `${BASELINE_S} s just before the CRD's change. Latency: spec change written -> its status write seen by a watch.`,
    '',
    '| pace (writes/s) | predicate | objects/s | migration s | rewritten | apiserver: before, migration | etcd: before, migration | operator: migration | reconciles: migration (before, per s) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...results.map((r) => {
      const { baseline: b, migration: m } = r;
      return (
        `| ${r.rate || 'unpaced'} | ${r.predicate ? 'generationChanged' : 'none'} | ${f(m.objectsPerSecond)} | ${f(m.seconds, 1)} | ` +
        `${m.rewritten.toLocaleString('en-US')} (${m.current} current, ${m.failed} failed) | ` +
        `${pct(b.cores.apiserver)}, ${pct(m.cores.apiserver)} | ${pct(b.cores.etcd)}, ${pct(m.cores.etcd)} | ` +
        `${pct(m.cores.operator)} | ${m.reconciles.toLocaleString('en-US')} (${f(b.reconciles / b.seconds, 1)}/s) |`
      );
    }),
    '',
    `The churn's latency (p50 / p99, ms): before; after the CRD change alone (a new version served, not storage: every watch ` +
      `of the kind ends and lists again), its first ${SETTLE_MS / 1000} s and after; during the migration, its first ` +
      `${SETTLE_MS / 1000} s (the storage change is a CRD change too) and after.`,
    '',
    '| pace | predicate | before | CRD change: first 20 s | CRD change: after | migration: first 20 s | migration: after |',
    '|---|---|---|---|---|---|---|',
    ...results.map((r) => {
      const l = (x) => `${f(x.p50Ms)} / ${f(x.p99Ms)}`;
      return (
        `| ${r.rate || 'unpaced'} | ${r.predicate ? 'generationChanged' : 'none'} | ${l(r.baseline.latency)} | ` +
        `${l(r.crdChange.latencyFirst20s)} | ${l(r.crdChange.latencyAfter20s)} | ${l(r.migration.latencyFirst20s)} | ` +
        `${l(r.migration.latencyAfter20s)} |`
      );
    }),
    '',
    `Load average (1 min) at each run's end: ${results.map((r) => r.loadAverage.toFixed(2)).join(', ')} (other work on the machine shows here).`,
    '',
  ];
  await writeFile(join(folder, `${stamp}-migrate.md`), lines.join('\n'));
  log(`wrote bench/results/${stamp}-migrate.json and .md`);
}

await main();
