#!/usr/bin/env node
// Start-up (issue 29, goal 4; issue 27, item 2): from process start to the first reconcile
// and to ready, Nestor's runtime, a Nest application with OperatorModule and
// controller-runtime, each started as a process against a private control plane, in turns.
//
//   npm run build && node bench/startup.mjs                      0 and 10,000 ConfigMaps, 5 reps, the restart case
//   node bench/startup.mjs --sizes 0 --reps 3 --no-restart       a quick look
//   node bench/startup.mjs --before /work/wt-base                adds runtime@before and nest@before
//
// The operators (bench/operators/startup-*.mjs, bench/controller-runtime/startup.go) reconcile
// Widgets and own ConfigMaps; one Widget and N ConfigMaps wait in the namespace (~1 KiB each):
// both informers list at start and the first reconcile comes once both are synced. Each prints
// its milestones on the wall clock; times here are from spawn:
//   imported      modules loaded, the first line of user code (Go: main() runs)
//   nest          Nest built the modules: the application's own onApplicationBootstrap (Nest app only)
//   first-object  the first object of a LIST in a cache (the first LIST answered and decoded)
//   synced        every cache synced (the manager's start resolved; Nest: the application context created)
//   reconcile     the first reconcile starts
//   readyz        /readyz answers 200, polled every 10 ms from here (Nest app and controller-runtime,
//                 whose readyz check is kubebuilder's healthz.Ping: it answers before the caches sync)
// The restart case: the API server killed; the operator started while it is down; the API
// server started again. Reported: from its first 200 on /readyz (polled here every 10 ms) to
// the operator's first reconcile, and from spawn.
//
// --before DIR: another built checkout (the commit before a change); its runs alternate with
// this one's. The operators' scripts are copied into DIR/bench/operators and run from there,
// so that they load that checkout's packages, Nest included.
// Node operators run with the generated Deployment's NODE_OPTIONS. Writes
// bench/results/<date>-startup.json and .md. Never part of `npm test`.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Transport } from '@nestor/core';
import { OPERATOR_NODE_OPTIONS } from '@nestor/operator/manifests';
import { parallel, TestEnvironment } from '@nestor/testing';
import { processCpuSeconds } from './lib/child.mjs';
import { PAYLOAD, WIDGET_CRD, WIDGETS, configMapsPath, median, nowUs, sleep, widgetsPath } from './lib/common.mjs';
import { controllerRuntimeVersion, ensureGoOperator } from './lib/go-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: {
    sizes: { type: 'string', default: '0,10000' },
    reps: { type: 'string', default: '5' },
    impls: { type: 'string', default: 'runtime,nest,controller-runtime' },
    restart: { type: 'boolean', default: true },
    'restart-reps': { type: 'string' },
    'downtime-ms': { type: 'string', default: '3000' },
    before: { type: 'string' },
    label: { type: 'string', default: 'startup' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  allowNegative: true,
});
if (opts.help) {
  process.stdout.write(
    readFileSync(fileURLToPath(import.meta.url), 'utf8')
      .split('\n')
      .slice(1, 8)
      .join('\n') + '\n',
  );
  process.exit(0);
}
const sizes = opts.sizes.split(',').map(Number);
const reps = Number(opts.reps);
const restartReps = Number(opts['restart-reps'] ?? opts.reps);
const downtimeMs = Number(opts['downtime-ms']);
const impls = opts.impls.split(',');
if (opts.before) for (const impl of ['runtime', 'nest']) if (impls.includes(impl)) impls.push(`${impl}@before`);
const MILESTONES = ['imported', 'nest', 'first-object', 'synced', 'reconcile', 'readyz'];
const log = (message) => process.stderr.write(`${new Date().toISOString().slice(11, 23)} ${message}\n`);

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

let goBinary;
let env;

/** Starts one implementation; its milestones (ms from spawn) fill `run.at` as they come. */
async function startImpl(impl, namespace, { firstObject = true } = {}) {
  const health = await freePort();
  const [name, variant] = impl.split('@');
  let command;
  let args;
  let childEnv = { ...process.env };
  if (name === 'controller-runtime') {
    command = goBinary;
    args = [];
    childEnv = {
      ...childEnv,
      NESTOR_STARTUP: '1',
      KUBECONFIG: env.kubeconfigPath,
      NESTOR_NAMESPACE: namespace,
      NESTOR_HEALTH_ADDR: `127.0.0.1:${health}`,
      ...(firstObject ? {} : { NESTOR_FIRST_OBJECT: '0' }),
    };
  } else {
    command = process.execPath;
    args = [
      join(variant === 'before' ? join(opts.before, 'bench') : here, 'operators', `startup-${name}.mjs`),
      '--kubeconfig',
      env.kubeconfigPath,
      '--namespace',
      namespace,
      '--health-port',
      String(health),
    ];
    childEnv.NODE_OPTIONS = OPERATOR_NODE_OPTIONS;
    delete childEnv.NESTOR_OPERATOR_DIST;
  }
  const spawnedUs = nowUs();
  const child = spawn(command, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const run = { impl, at: {}, stderr: '' };
  const waiters = new Set();
  const note = (milestone, us) => {
    if (run.at[milestone] !== undefined) return;
    run.at[milestone] = (us - spawnedUs) / 1000;
    for (const waiter of waiters) waiter();
  };
  child.stdout.setEncoding('utf8');
  let buffered = '';
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        run.stderr += `[stdout] ${line}\n`;
        continue;
      }
      if (message.ev === 'error') run.error = message.message;
      else if (message.at) note(message.ev, message.at);
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => (run.stderr = (run.stderr + text).slice(-20_000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('exit', (code, signal) => {
    run.exit = code ?? signal;
    for (const waiter of waiters) waiter();
  });
  // /readyz, where the implementation serves it: polled until the first 200.
  const probing = name === 'runtime' ? undefined : pollReadyz(health, run, () => note('readyz', nowUs()));
  const until = (milestone, timeoutMs) =>
    new Promise((resolve, reject) => {
      const deadline = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${impl}: no ${milestone} within ${timeoutMs} ms; stderr: ${run.stderr.slice(-3000)}`));
      }, timeoutMs);
      const check = () => {
        if (run.at[milestone] !== undefined || run.exit !== undefined || run.error) {
          clearTimeout(deadline);
          waiters.delete(check);
          if (run.at[milestone] !== undefined) resolve(run.at[milestone]);
          else reject(new Error(`${impl} ended before ${milestone}: ${run.error ?? run.stderr.slice(-3000)}`));
        }
      };
      waiters.add(check);
      check();
    });
  const stop = async () => {
    run.done = true;
    await probing;
    if (run.exit === undefined) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  return { run, until, stop, probing };
}

async function pollReadyz(port, run, onReady) {
  while (!run.done && run.exit === undefined) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.status === 200) return onReady();
    } catch {
      // not listening yet
    }
    await sleep(10);
  }
}

/** The control plane's CPU, to let it settle between runs. */
const controlPlaneCpu = () => env.pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
async function settle() {
  const deadline = Date.now() + 20_000;
  for (let before = controlPlaneCpu(); Date.now() < deadline;) {
    await sleep(300);
    const now = controlPlaneCpu();
    if (now - before < 0.03) return;
    before = now;
  }
}

const rotated = (rep) => impls.map((_, i) => impls[(i + rep) % impls.length]);

async function fill(namespace, size, load) {
  await load.json('POST', widgetsPath(namespace), {
    body: {
      apiVersion: `${WIDGETS.group}/${WIDGETS.version}`,
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { size: 1 },
    },
  });
  const names = Array.from({ length: size }, (_, i) => `cm-${i}`);
  await parallel(names, 32, (name) =>
    load.json('POST', configMapsPath(namespace), {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { payload: PAYLOAD } },
    }),
  );
}

async function startupCase(namespace, size) {
  const runs = [];
  for (let rep = 0; rep < reps; rep++) {
    for (const impl of rotated(rep)) {
      await settle();
      const started = await startImpl(impl, namespace);
      try {
        await started.until('reconcile', 120_000);
        if (started.probing) await Promise.race([started.probing, sleep(30_000)]);
        await sleep(200); // a late first-object or synced line
      } catch (error) {
        // One failed start is a row's note, not the end of the run.
        started.run.failed = error.message.slice(0, 2000);
        log(`${size} objects, rep ${rep + 1}, ${impl} failed: ${started.run.failed}`);
      } finally {
        await started.stop();
      }
      if (started.run.failed) {
        runs.push({ size, rep, impl, ms: {}, failed: started.run.failed });
        continue;
      }
      runs.push({
        size,
        rep,
        impl,
        ms: started.run.at,
        ...(process.env.NESTOR_LOG ? { stderr: started.run.stderr.slice(-6000) } : {}),
      });
      log(`${size} objects, rep ${rep + 1}, ${impl}: ${describe(started.run.at)}`);
    }
  }
  return runs;
}

/** The API server killed, the operator started meanwhile, the server back: from its first answer to the first reconcile. */
async function restartCase(namespace) {
  const runs = [];
  for (let rep = 0; rep < restartReps; rep++) {
    for (const impl of rotated(rep)) {
      await settle();
      const restart = env.restartApiServer({ kill: true, downtimeMs });
      // Down once /readyz no longer answers.
      for (;;) {
        const up = await env.client.raw('GET', '/readyz', undefined, undefined, 500).then(
          () => true,
          () => false,
        );
        if (!up) break;
        await sleep(20);
      }
      const spawnedUs = nowUs();
      const started = await startImpl(impl, namespace, { firstObject: false });
      let answeredUs;
      const answered = (async () => {
        for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
          const ok = await env.client.raw('GET', '/readyz', undefined, undefined, 500).then(
            (r) => r.status === 200,
            () => false,
          );
          if (ok) return (answeredUs = nowUs());
          await sleep(10);
        }
        throw new Error('the API server did not answer /readyz within 120 s');
      })();
      try {
        await restart;
        await answered;
        await started.until('reconcile', 120_000);
      } catch (error) {
        started.run.failed = error.message.slice(0, 2000);
        log(`restart, rep ${rep + 1}, ${impl} failed: ${started.run.failed}`);
      } finally {
        await restart.catch(() => {});
        await started.stop();
      }
      if (started.run.failed) {
        runs.push({ rep, impl, ms: {}, failed: started.run.failed, stderr: started.run.stderr.slice(-6000) });
        continue;
      }
      const at = started.run.at;
      const answeredMs = (answeredUs - spawnedUs) / 1000;
      const run = {
        rep,
        impl,
        answeredMs,
        ms: at,
        afterAnswerMs: at.reconcile - answeredMs,
        // With NESTOR_LOG=1 the Node operators log on stderr: where the seconds went.
        answeredAt: new Date(answeredUs / 1000).toISOString(),
        ...(process.env.NESTOR_LOG ? { stderr: started.run.stderr.slice(-6000) } : {}),
      };
      runs.push(run);
      log(
        `restart, rep ${rep + 1}, ${impl}: API server answered ${answeredMs.toFixed(0)} ms after spawn; first reconcile ${run.afterAnswerMs.toFixed(0)} ms after that`,
      );
    }
  }
  return runs;
}

const describe = (at) =>
  MILESTONES.filter((m) => at[m] !== undefined)
    .map((m) => `${m} ${at[m].toFixed(0)}`)
    .join(', ');

function stats(values) {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (finite.length === 0) return undefined;
  return { median: median(finite), min: finite[0], max: finite.at(-1), n: finite.length };
}

function summarize(runs) {
  const summary = {};
  for (const run of runs) {
    const key = `${run.size}/${run.impl}`;
    summary[key] ??= { size: run.size, impl: run.impl, runs: [] };
    summary[key].runs.push(run.ms);
  }
  for (const entry of Object.values(summary)) {
    entry.milestones = Object.fromEntries(
      MILESTONES.map((m) => [m, stats(entry.runs.map((r) => r[m]))]).filter(([, s]) => s),
    );
    delete entry.runs;
  }
  return Object.values(summary);
}

const cell = (s) => (s ? `${s.median.toFixed(0)} (${s.min.toFixed(0)}-${s.max.toFixed(0)})` : '');

function render(result) {
  const lines = [
    `Start-up, ms from spawn: median (min-max) of ${result.reps} runs per implementation, alternating. ` +
      `${result.machine}; load average at start ${result.loadavg.map((l) => l.toFixed(2)).join(' ')}.`,
    '',
    `| objects | implementation | ${MILESTONES.join(' | ')} |`,
    `|---:|---|${MILESTONES.map(() => '---:').join('|')}|`,
  ];
  for (const row of result.summary)
    lines.push(`| ${row.size} | ${row.impl} | ${MILESTONES.map((m) => cell(row.milestones[m])).join(' | ')} |`);
  const failed = [...result.runs, ...(result.restart ?? [])].filter((r) => r.failed);
  if (failed.length)
    lines.push('', `Failed runs (left out): ${failed.map((r) => `${r.impl} (${r.failed.slice(0, 120)})`).join('; ')}`);
  if (result.restart) {
    lines.push(
      '',
      `Restart: the API server killed (down ${result.downtimeMs} ms, then its start), the operator spawned while it is down; ms, median (min-max) of ${result.restartReps}.`,
      '',
      '| implementation | API server answers /readyz, from spawn | first reconcile, from spawn | first reconcile after the API server answered |',
      '|---|---:|---:|---:|',
    );
    for (const impl of impls) {
      const runs = result.restart.filter((r) => r.impl === impl);
      lines.push(
        `| ${impl} | ${cell(stats(runs.map((r) => r.answeredMs)))} | ${cell(stats(runs.map((r) => r.ms.reconcile)))} | ${cell(stats(runs.map((r) => r.afterAnswerMs)))} |`,
      );
    }
  }
  return lines.join('\n');
}

const result = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  loadavg: os.loadavg(),
  reps,
  restartReps,
  downtimeMs,
  sizes,
  impls,
  nodeOptions: OPERATOR_NODE_OPTIONS,
  ...(opts.before ? { before: opts.before } : {}),
};
try {
  if (opts.before) {
    for (const name of ['runtime', 'nest'])
      await copyFile(
        join(here, 'operators', `startup-${name}.mjs`),
        join(opts.before, 'bench', 'operators', `startup-${name}.mjs`),
      );
  }
  if (impls.includes('controller-runtime')) {
    goBinary = await ensureGoOperator({ onProgress: log });
    result.controllerRuntime = controllerRuntimeVersion();
  }
  env = await TestEnvironment.start({ useExistingCluster: false, crds: [WIDGET_CRD] });
  const version = await env.client.request('GET', '/version');
  result.kubernetes = version.gitVersion;
  result.machine = `${os.cpus().length} cores, Node ${process.version.slice(1)}, Kubernetes ${version.gitVersion.slice(1)}${result.controllerRuntime ? `, controller-runtime ${result.controllerRuntime}` : ''}`;
  const load = await Transport.fromKubeConfig(env.kubeConfig, { maxSockets: 32, userAgent: 'nestor-bench-load' });
  const runs = [];
  let empty;
  for (const size of sizes) {
    const namespace = await env.createNamespace(`startup-${size}`);
    log(`creating 1 Widget and ${size} ConfigMaps in ${namespace}`);
    await fill(namespace, size, load);
    if (size === 0) empty = namespace;
    runs.push(...(await startupCase(namespace, size)));
  }
  result.runs = runs;
  result.summary = summarize(runs);
  if (opts.restart) {
    if (!empty) {
      empty = await env.createNamespace('startup-restart');
      await fill(empty, 0, load);
    }
    load.close();
    result.restart = await restartCase(empty);
  } else load.close();
} finally {
  await env?.stop();
}

const markdown = render(result);
process.stdout.write(`${markdown}\n`);
const stamp = result.date.slice(0, 16).replace(/[:]/g, '');
await mkdir(join(here, 'results'), { recursive: true });
const base = join(here, 'results', `${stamp}-${opts.label}`);
await writeFile(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
await writeFile(`${base}.md`, `${markdown}\n`);
log(`results: ${base}.json (and .md)`);
