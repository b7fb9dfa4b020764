#!/usr/bin/env node
// Issue 44: how soon work resumes once the API server answers again after an outage. The
// operators (the Widget operator with its defaults, one process each, bench/operators) run
// beside each other, each in its namespace, on one control plane; once every one has
// reconciled its Widgets, kube-apiserver is killed (SIGKILL; --graceful: SIGTERM, whose exit
// can take 20 s, so the outage lasts at least that) and started again D seconds after the
// signal. This process polls /readyz every 50 ms; at its first 200 it changes one
// Widget's spec in each namespace (its written-at annotation stamped) and measures, per
// process: the wait from that answer to the reconcile's start (the first watch event the
// informer received after the outage: nothing else is queued, and nothing else reaches a
// reconcile through the generation-changed predicate), and to the new status.observedGeneration
// (the reconcile's writes done). The longest of each over the processes of one implementation
// is the figure: the watches' backoff is random (full jitter), so more processes see more of it.
// Fresh processes for each outage. Not part of npm test.
//   npm run build && node bench/outage.mjs [--downtimes 10,60,300] [--impls nestor,controller-runtime]
//     [--processes 3] [--objects 20] [--graceful] [--out FILE]
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OPERATOR_NODE_OPTIONS } from '@nestor/operator/manifests';
import { parallel, TestEnvironment } from '@nestor/testing';
import { OperatorProcess, killAllChildren } from './lib/child.mjs';
import { WIDGET_CRD, WRITTEN_AT, nowUs, sleep, widgetsPath } from './lib/common.mjs';
import { controllerRuntimeVersion, ensureGoOperator } from './lib/go-build.mjs';

const { values } = parseArgs({
  options: {
    downtimes: { type: 'string', default: '10,60,300' },
    impls: { type: 'string', default: 'nestor,controller-runtime' },
    processes: { type: 'string', default: '3' },
    objects: { type: 'string', default: '20' },
    workers: { type: 'string', default: '8' },
    'settle-seconds': { type: 'string', default: '5' },
    graceful: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const downtimes = values.downtimes.split(',').map(Number);
if (downtimes.some((d) => !(d > 0) || d > 900)) {
  throw new Error(`--downtimes: seconds in (0, 900], comma-separated; got "${values.downtimes}"`);
}
const impls = values.impls.split(',');
const unknown = impls.filter((impl) => !['nestor', 'controller-runtime'].includes(impl));
if (unknown.length) throw new Error(`--impls: nestor and/or controller-runtime; got ${unknown.join(', ')}`);
const PROCESSES = Number(values.processes);
if (!Number.isInteger(PROCESSES) || PROCESSES < 1)
  throw new Error(`--processes: a whole number >= 1; got "${values.processes}"`);
const N = Number(values.objects);
const WORKERS = Number(values.workers);
/** Past this after the server answers, a process that has not reconciled the change has failed the run. */
const RESUME_BOUND_MS = 150_000;
const POLL_MS = 50;
const here = dirname(fileURLToPath(import.meta.url));
const t0 = Date.now();
const log = (line) => console.error(`[outage ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}`);

const env = await TestEnvironment.start({ useExistingCluster: false, crds: [WIDGET_CRD] });
process.on('SIGINT', () => {
  killAllChildren();
  void env.stop().finally(() => process.exit(130));
});
const dir = await mkdtemp(join(os.tmpdir(), 'nestor-outage-'));
const kubeconfig = join(dir, 'admin.kubeconfig');
await writeFile(kubeconfig, env.kubeConfig.exportConfig(), { mode: 0o600 });
const goBinary = impls.includes('controller-runtime') ? await ensureGoOperator({ onProgress: log }) : undefined;
const runs = [];

/** Polls `check` every POLL_MS until it returns a value, or throws past `boundMs` from `since`. */
async function poll(check, since, boundMs, what) {
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() - since > boundMs) throw new Error(`${what}: not within ${boundMs / 1000} s`);
    await sleep(POLL_MS);
  }
}

/** One operator process in a namespace of its own, its Widgets reconciled. */
async function startOperator(impl, index) {
  const ns = await env.createNamespace(`outage-${impl === 'nestor' ? 'n' : 'cr'}${index}`);
  const names = Array.from({ length: N }, (_, i) => `widget-${i}`);
  await parallel(names, 16, (name) =>
    env.client.request('POST', widgetsPath(ns), {
      apiVersion: 'bench.nestor.dev/v1',
      kind: 'Widget',
      metadata: { name },
      spec: { size: 1, round: 0 },
    }),
  );
  const op = await OperatorProcess.start(impl, {
    kubeconfig,
    namespace: ns,
    mode: 'reconcile',
    workers: WORKERS,
    goBinary,
    nodeFlags: OPERATOR_NODE_OPTIONS.split(/\s+/),
  });
  await op.next('ready', 120_000);
  const since = Date.now();
  await poll(
    async () => {
      const list = await env.client.request('GET', widgetsPath(ns));
      return list.items.every((w) => w.status?.observedGeneration === w.metadata.generation) ? true : undefined;
    },
    since,
    120_000,
    `${impl} in ${ns}: the first reconcile of every Widget`,
  );
  return { impl, index, ns, op };
}

/** The change made as the server answers, and the waits it measures for one process. */
async function resume(slot, answeredAt, downtime) {
  const path = widgetsPath(slot.ns, 'widget-0');
  const writtenAtUs = nowUs();
  const changed = await poll(
    () =>
      env.client.request(
        'PATCH',
        path,
        { metadata: { annotations: { [WRITTEN_AT]: String(writtenAtUs) } }, spec: { round: downtime } },
        'application/merge-patch+json',
        5_000,
      ),
    answeredAt,
    30_000,
    `the change in ${slot.ns}`,
  );
  const generation = changed.metadata.generation;
  const changedMs = Date.now() - answeredAt;
  await poll(
    async () => ((await env.client.request('GET', path)).status?.observedGeneration >= generation ? true : undefined),
    answeredAt,
    RESUME_BOUND_MS,
    `${slot.impl} in ${slot.ns}: the reconcile of the change`,
  );
  const reconciledMs = Date.now() - answeredAt;
  const stats = await slot.op.ask({ cmd: 'stats' }, 'stats');
  // The reconcile's start: the write's stamp plus the wait the operator measured from it.
  const startedUs = writtenAtUs + Math.min(...stats.latUs);
  const answeredAtUs = answeredAt * 1000;
  return { changedMs, eventMs: (startedUs - answeredAtUs) / 1000, reconciledMs };
}

async function outage(downtime) {
  const slots = [];
  try {
    for (let index = 0; index < PROCESSES; index++) {
      // Alternating, so that neither implementation always starts first.
      for (const impl of index % 2 ? [...impls].reverse() : impls) slots.push(await startOperator(impl, index));
    }
    await sleep(Number(values['settle-seconds']) * 1000);
    for (const slot of slots) await slot.op.ask({ cmd: 'mark' }, 'marked');
    log(`${slots.length} processes ready; stopping the API server for ${downtime} s`);
    // Counted from the signal: kube-apiserver stops answering at SIGTERM, and may take 20 s to exit.
    const stoppedAt = Date.now();
    await env.stopApiServer({ kill: !values.graceful });
    const exitedSeconds = (Date.now() - stoppedAt) / 1000;
    await sleep(Math.max(0, stoppedAt + downtime * 1000 - Date.now()));
    const startedAt = Date.now();
    const started = env.startApiServer();
    started.catch(() => {});
    let firstAnswerAt;
    const answeredAt = await poll(
      async () => {
        const { status } = await env.client.raw('GET', '/readyz', undefined, undefined, 1_000);
        firstAnswerAt ??= Date.now();
        return status === 200 ? Date.now() : undefined;
      },
      startedAt,
      120_000,
      'the API server /readyz 200',
    );
    log(
      `the API server answers ${((firstAnswerAt - startedAt) / 1000).toFixed(1)} s after its start, ` +
        `ready ${((answeredAt - startedAt) / 1000).toFixed(1)} s after it`,
    );
    const results = await Promise.allSettled(slots.map((slot) => resume(slot, answeredAt, downtime)));
    await started;
    for (const [i, result] of results.entries()) {
      const { impl, index } = slots[i];
      const run = {
        downtimeSeconds: downtime,
        measuredDowntimeSeconds: (startedAt - stoppedAt) / 1000,
        serverExitSeconds: exitedSeconds,
        stopToReadySeconds: (answeredAt - stoppedAt) / 1000,
        serverStartToAnswerSeconds: (firstAnswerAt - startedAt) / 1000,
        serverStartToReadySeconds: (answeredAt - startedAt) / 1000,
        impl,
        process: index,
        ...(result.status === 'fulfilled'
          ? {
              changeTookSeconds: result.value.changedMs / 1000,
              firstEventSeconds: result.value.eventMs / 1000,
              firstReconcileSeconds: result.value.reconciledMs / 1000,
            }
          : { error: result.reason.message.split('\n')[0] }),
      };
      runs.push(run);
      log(
        run.error
          ? `${impl} #${index} after ${downtime} s: failed: ${run.error}`
          : `${impl} #${index} after ${downtime} s: reconcile started ${run.firstEventSeconds.toFixed(2)} s, ` +
              `status written ${run.firstReconcileSeconds.toFixed(2)} s after the server answered`,
      );
      if (process.env.NESTOR_LOG && impl === 'nestor')
        log(`${impl} #${index} stderr:\n${slots[i].op.stderr.slice(-6000)}`);
    }
  } finally {
    await Promise.all(slots.map((slot) => slot.op.stop()));
    for (const slot of slots) await env.client.request('DELETE', widgetsPath(slot.ns)).catch(() => {});
  }
}

try {
  for (const downtime of downtimes) await outage(downtime);
} finally {
  await env.stop();
  await rm(dir, { recursive: true, force: true });
}

const label = (impl) => (impl === 'controller-runtime' ? `controller-runtime ${controllerRuntimeVersion()}` : impl);
const seconds = (values) => (values.length ? `${Math.max(...values).toFixed(2)} s` : 'n/a');
const spread = (values) => (values.length ? values.map((v) => v.toFixed(2)).join(', ') : 'n/a');
/** The outage as run, where the server's exit made it longer than asked (SIGTERM). */
const asRun = (run) =>
  run && run.measuredDowntimeSeconds - run.downtimeSeconds > 1
    ? ` (${run.measuredDowntimeSeconds.toFixed(0)} s as run)`
    : '';
const rows = downtimes.flatMap((downtime) => {
  const server = runs.find((r) => r.downtimeSeconds === downtime);
  return impls.map((impl) => {
    const mine = runs.filter((r) => r.downtimeSeconds === downtime && r.impl === impl);
    const ok = mine.filter((r) => !r.error);
    const failed = mine.length - ok.length;
    return (
      `| ${downtime} s${asRun(server)} | ${label(impl)} | ${server ? server.serverStartToReadySeconds.toFixed(1) : ''} s | ` +
      `${seconds(ok.map((r) => r.firstEventSeconds))} | ${seconds(ok.map((r) => r.firstReconcileSeconds))} | ` +
      `${spread(ok.map((r) => r.firstEventSeconds))} | ${failed || ''} |`
    );
  });
});
const table = [
  `## Outage run ${new Date().toISOString()}: ${PROCESSES} processes of each, ${N} Widgets each, ` +
    `API server ${values.graceful ? 'stopped (SIGTERM)' : 'killed'}`,
  '',
  "Seconds from the API server's first /readyz 200 (polled every 50 ms) to the reconcile of a change made then: its start " +
    "(the watch event) and its status written; the longest over the processes, then each process's start.",
  '',
  '| outage | operator | server start to ready | longest to the event | longest to the status | each, to the event | failed |',
  '|---:|---|---:|---:|---:|---|---:|',
  ...rows,
].join('\n');
console.log(table);
const out =
  values.out ?? join(here, 'results', `outage-${new Date().toISOString().slice(0, 16).replace(':', '')}.json`);
await writeFile(
  out,
  JSON.stringify(
    { processes: PROCESSES, objects: N, graceful: values.graceful, loadAverage: os.loadavg(), runs },
    null,
    2,
  ),
);
await writeFile(out.replace(/\.json$/, '.md'), `${table}\n`);
log(`results: ${out}`);
if (runs.some((r) => r.error)) process.exitCode = 1;
