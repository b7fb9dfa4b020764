#!/usr/bin/env node
// The half-open row of issue 27, standalone: ONE operator process with its defaults (no
// standby, the generated Deployment's NODE_OPTIONS), doing the benchmark reconcile (for each
// Widget a server-side apply of a child ConfigMap and a status patch, 8 workers), reaching
// the API server through a TcpRelay. Once every Widget has converged, every connection it
// has open is silently dropped (bench/lib/chaos/half-open.mjs), then every Widget's spec
// changes; measured: seconds from the fault until every Widget's status shows the new
// generation, and the connections the operator opened meanwhile. The relay runs on a thread
// of its own (bench/lib/chaos/relay-worker.mjs), so this process's LISTs never stall it. Nestor and
// controller-runtime alternate on one control plane. Not part of npm test.
//   npm run build && node bench/half-open.mjs [--objects 500] [--reps 1] [--impls nestor,controller-runtime]
//     [--settle-seconds 10] [--out FILE]
// Implementations: nestor (the transport's defaults), nestor-http1 and nestor-http2 (its http2
// option set false / true), controller-runtime. DISABLE_HTTP2=1 in the environment reaches both.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OPERATOR_NODE_OPTIONS } from '@nestor/operator/manifests';
import { parallel, TestEnvironment } from '@nestor/testing';
import { halfOpen } from './lib/chaos/half-open.mjs';
import { ThreadedRelay } from './lib/chaos/relay-worker.mjs';
import { OperatorProcess, killAllChildren } from './lib/child.mjs';
import { WIDGET_CRD, sleep, widgetsPath } from './lib/common.mjs';
import { controllerRuntimeVersion, ensureGoOperator } from './lib/go-build.mjs';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '500' },
    workers: { type: 'string', default: '8' },
    reps: { type: 'string', default: '1' },
    impls: { type: 'string', default: 'nestor,controller-runtime' },
    'settle-seconds': { type: 'string', default: '10' },
    out: { type: 'string' },
  },
});
const N = Number(values.objects);
const WORKERS = Number(values.workers);
const CONVERGE_BOUND_MS = 300_000;
const here = dirname(fileURLToPath(import.meta.url));
const t0 = Date.now();
const log = (line) => console.error(`[half-open ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const impls = values.impls.split(',');
const disabled = process.env.DISABLE_HTTP2;

const env = await TestEnvironment.start({ useExistingCluster: false, crds: [WIDGET_CRD] });
process.on('SIGINT', () => {
  killAllChildren();
  void env.stop().finally(() => process.exit(130));
});
const dir = await mkdtemp(join(os.tmpdir(), 'nestor-half-open-'));
const goBinary = impls.includes('controller-runtime') ? await ensureGoOperator({ onProgress: log }) : undefined;
const runs = [];

/** Ms from `since` until every Widget's status.observedGeneration is its generation, at least `generation`. */
async function converged(ns, generation, since) {
  for (;;) {
    const list = await env.client.request('GET', widgetsPath(ns)).catch(() => undefined);
    const done =
      list?.items.filter(
        (w) => w.metadata.generation >= generation && w.status?.observedGeneration === w.metadata.generation,
      ).length ?? 0;
    if (done === N) return Date.now() - since;
    if (Date.now() - since > CONVERGE_BOUND_MS) {
      throw new Error(`only ${done} of ${N} Widgets converged on generation ${generation} in ${CONVERGE_BOUND_MS} ms`);
    }
    // A LIST of thousands is work for the API server and this process: not too often.
    await sleep(N > 1000 ? 1000 : 250);
  }
}

async function run(impl, rep) {
  const ns = await env.createNamespace('half-open');
  const names = Array.from({ length: N }, (_, i) => `widget-${i}`);
  await parallel(names, 32, (name) =>
    env.client.request('POST', widgetsPath(ns), {
      apiVersion: 'bench.nestor.dev/v1',
      kind: 'Widget',
      metadata: { name },
      spec: { size: 1, round: 0 },
    }),
  );
  const relay = await ThreadedRelay.start(env.server);
  const kubeconfig = join(dir, `${ns}.kubeconfig`);
  await writeFile(kubeconfig, relay.kubeConfig(env.kubeConfig).exportConfig(), { mode: 0o600 });
  let op;
  try {
    // nestor-http1 / nestor-http2: Nestor with the transport's http2 option set (unset for 'nestor').
    if (impl.startsWith('nestor-http')) process.env.NESTOR_HTTP2 = String(impl === 'nestor-http2');
    else delete process.env.NESTOR_HTTP2;
    op = await OperatorProcess.start(impl.startsWith('nestor') ? 'nestor' : impl, {
      kubeconfig,
      namespace: ns,
      mode: 'reconcile',
      workers: WORKERS,
      goBinary,
      nodeFlags: OPERATOR_NODE_OPTIONS.split(/\s+/),
    });
    await op.next('ready', 120_000);
    const startedAt = Date.now();
    const initialMs = await converged(ns, 1, startedAt);
    const initial = await op.ask({ cmd: 'stats', lite: true }, 'stats');
    await sleep(Number(values['settle-seconds']) * 1000);
    const before = await op.ask({ cmd: 'stats', lite: true }, 'stats');
    await relay.count();
    const connectionsBefore = relay.accepted;
    const endedAt = await halfOpen({ relay });
    await parallel(names, 32, (name) =>
      env.client.request('PATCH', widgetsPath(ns, name), { spec: { round: 1 } }, 'application/merge-patch+json'),
    );
    const bumpMs = Date.now() - endedAt;
    const ms = await converged(ns, 2, endedAt);
    await relay.count();
    const after = await op.ask({ cmd: 'stats', lite: true }, 'stats');
    const result = {
      impl,
      rep,
      convergedSeconds: ms / 1000,
      changesTookSeconds: bumpMs / 1000,
      newConnections: relay.accepted - connectionsBefore,
      cpuSeconds: (after.cpuUs - before.cpuUs) / 1e6,
      // From the process's start: start-up, the first sync and reconcile of every Widget.
      initialSeconds: initialMs / 1000,
      initialCpuSeconds: initial.cpuUs / 1e6,
      totalCpuSeconds: after.cpuUs / 1e6,
      peakRssMB: after.maxRss / 2 ** 20,
    };
    runs.push(result);
    log(
      `${impl} rep ${rep}: all ${N} converged ${result.convergedSeconds.toFixed(1)} s after the connections were dropped ` +
        `(${result.newConnections} new connections); first reconcile of all ${result.initialSeconds.toFixed(1)} s, ` +
        `CPU ${result.totalCpuSeconds.toFixed(2)} s in all, peak RSS ${result.peakRssMB.toFixed(0)} MB`,
    );
    if (process.env.NESTOR_LOG) log(`${impl} stderr:\n${op.stderr.slice(-6000)}`);
  } catch (error) {
    log(`${impl} rep ${rep} failed: ${error.message}`);
    runs.push({ impl, rep, error: error.message.split('\n')[0] });
  } finally {
    await op?.stop();
    await relay.close();
    await env.client.request('DELETE', widgetsPath(ns)).catch(() => {});
  }
}

try {
  for (let rep = 1; rep <= Number(values.reps); rep++) {
    // A different order each repetition, so machine drift spreads over both.
    const order = rep % 2 ? impls : [...impls].reverse();
    for (const impl of order) await run(impl, rep);
  }
} finally {
  await env.stop();
}

const label = (impl) => (impl === 'controller-runtime' ? `controller-runtime ${controllerRuntimeVersion()}` : impl);
const table = [
  `## Half-open run ${new Date().toISOString()}: ${N} Widgets, one process each, ${WORKERS} workers` +
    (disabled ? `, DISABLE_HTTP2=${disabled}` : ''),
  '',
  '| rep | operator | converged after the drop | new connections | CPU over the fault | first reconcile of all | CPU in all | peak RSS |',
  '|---:|---|---:|---:|---:|---:|---:|---:|',
  ...runs.map((r) =>
    r.error
      ? `| ${r.rep} | ${label(r.impl)} | failed: ${r.error} | | | | | |`
      : `| ${r.rep} | ${label(r.impl)} | ${r.convergedSeconds.toFixed(1)} s | ${r.newConnections} | ${r.cpuSeconds.toFixed(2)} s | ` +
        `${r.initialSeconds.toFixed(1)} s | ${r.totalCpuSeconds.toFixed(2)} s | ${r.peakRssMB.toFixed(0)} MB |`,
  ),
].join('\n');
console.log(table);
const out =
  values.out ?? join(here, 'results', `half-open-${new Date().toISOString().slice(0, 16).replace(':', '')}.json`);
await writeFile(out, JSON.stringify({ objects: N, workers: WORKERS, loadAverage: os.loadavg(), runs }, null, 2));
await writeFile(out.replace(/\.json$/, '.md'), `${table}\n`);
log(`results: ${out}`);
if (runs.some((r) => r.error)) process.exitCode = 1;
