#!/usr/bin/env node
// The floor: what an operator as `nestor init` + `nestor create api` generate it holds when
// it has nothing to do, run as its generated Deployment runs it, and what each import costs.
//
//   npm run build && node bench/floor.mjs            scaffold, 3 runs, layers, per-import costs
//   node bench/floor.mjs --runs 5 --idle-ms 60000    more runs, a longer idle wait (default 20 s)
//   node bench/floor.mjs --app /tmp/app              reuse a scaffold (kept with --keep)
//   node bench/floor.mjs --no-floor --no-startup --no-imports --layer bare --layer runtime-bare
//                                                    some layers only (keys: bench/lib/floor-layers.mjs)
//   node bench/floor.mjs --before /work/wt-base      each layer also from another built checkout, in turns
//   node bench/floor.mjs --kubeconfig-file           a kubeconfig file, not the pod's service account files
//
// The layers (bench/lib/floor-layers.mjs): Node alone, an empty Nest application context,
// `@nestor/operator` imported into it, OperatorModule with the controller, the generated app,
// and for reference the Nest-free entry (createOperator, with the Deployment's settings and
// with none) and the starter without Nestor; each idle, RSS from outside, then the probe's
// RSS and V8 heap after the garbage settled.
//
// The app: packages/cli/fixtures/nest12-app (a `nest new` starter, express included) gets
// `nestor init` and `nestor create api`, is built with tsc, and `nestor manifests` writes its
// Deployment. Each run starts `node dist/main.js` with that Deployment's environment
// (NODE_OPTIONS, NODE_ENV, the bind addresses on free loopback ports, leader election) against
// a private control plane, waits for /readyz, idles, and reads /proc/<pid>/status (RSS as the
// kubelet and `ps` see it). bench/lib/floor-probe.cjs, loaded with --require, then settles the
// garbage and reports the V8 heap by space, code, external memory and the modules loaded.
// A second phase starts it with one CachePool waiting: time to ready and to the first
// reconcile (the object's status written), from spawn. Medians of the runs are reported.
//
// Writes bench/results/<date>-floor.json and prints a Markdown summary. Never part of `npm test`.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { TestEnvironment } from '@nestor/testing';
import { median as medianOf } from './lib/common.mjs';
import { LAYERS } from './lib/floor-layers.mjs';
import { canMountServiceAccount, inPodCommand, serviceAccountFiles } from './lib/pod-credentials.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const nestor = join(root, 'packages', 'cli', 'dist', 'main.js');
const probe = join(here, 'lib', 'floor-probe.cjs');
const MB = 2 ** 20;

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    'idle-ms': { type: 'string', default: '20000' },
    app: { type: 'string' },
    keep: { type: 'boolean', default: false },
    imports: { type: 'boolean', default: true },
    startup: { type: 'boolean', default: true },
    layers: { type: 'boolean', default: true },
    layer: { type: 'string', multiple: true },
    floor: { type: 'boolean', default: true },
    before: { type: 'string' },
    'kubeconfig-file': { type: 'boolean', default: false },
    label: { type: 'string', default: 'floor' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  allowNegative: true,
});
if (opts.help) {
  process.stdout.write(
    readFileSync(fileURLToPath(import.meta.url), 'utf8')
      .split('\n')
      .slice(1, 18)
      .join('\n') + '\n',
  );
  process.exit(0);
}
const runs = Number(opts.runs);
const idleMs = Number(opts['idle-ms']);

// NaN, not null, when no sample was taken: the report prints it as such.
const median = (values) => medianOf(values) ?? NaN;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function run(args, cwd) {
  const result = spawnSync(process.execPath, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** The app as the user has it after init, create api, a build and `nestor manifests`. */
async function scaffold() {
  const app = await mkdtemp(join(os.tmpdir(), 'nestor-floor-'));
  await cp(join(root, 'packages', 'cli', 'fixtures', 'nest12-app'), app, { recursive: true });
  await symlink(join(root, 'node_modules'), join(app, 'node_modules'), 'dir');
  run([nestor, 'init'], app);
  run([nestor, 'create', 'api', '--group', 'floor.nestor.dev', '--version', 'v1alpha1', '--kind', 'CachePool'], app);
  run([join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], app);
  run([nestor, 'manifests', '--module', 'dist/app.module.js', '--out', 'deploy'], app);
  return app;
}

/** A copy of the app whose node_modules are another checkout's (its own build of Nestor). */
async function beforeApp(app, checkout) {
  const copy = await mkdtemp(join(os.tmpdir(), 'nestor-floor-before-'));
  for (const entry of ['dist', 'deploy', 'package.json'])
    await cp(join(app, entry), join(copy, entry), { recursive: true });
  await symlink(join(checkout, 'node_modules'), join(copy, 'node_modules'), 'dir');
  return copy;
}

/** The generated Deployment's container environment, `valueFrom` entries left out. */
async function deploymentEnvironment(app) {
  const documents = parseAllDocuments(await readFile(join(app, 'deploy', 'operator', 'deployment.yaml'), 'utf8'));
  const deployment = documents.map((d) => d.toJS()).find((d) => d?.kind === 'Deployment');
  const env = {};
  for (const variable of deployment.spec.template.spec.containers[0].env)
    if (variable.value !== undefined) env[variable.name] = variable.value;
  return env;
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

function procStatus(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), rssAnon: kb('RssAnon'), rssFile: kb('RssFile'), hwm: kb('VmHWM') };
}

async function httpStatus(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

async function waitFor(what, check, timeoutMs, child) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (child.exitCode !== null)
      throw new Error(`the operator exited (${child.exitCode}) before ${what}:\n${child.output.join('')}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${child.output.join('').slice(-4000)}`);
    await sleep(20);
  }
}

/** Starts the operator as its Deployment does; returns the child and its start time. */
async function startOperator(app, deployEnv, control, namespace, main = 'dist/main.js', { modules = true } = {}) {
  const health = await freePort();
  const metrics = await freePort();
  const probeOut = join(app, `probe-${process.pid}-${Date.now()}.json`);
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...deployEnv,
    // The Deployment's options, and the probe (bench/lib/floor-probe.cjs).
    NODE_OPTIONS: `${deployEnv.NODE_OPTIONS ?? ''} --require ${probe}`.trim(),
    FLOOR_PROBE_OUT: probeOut,
    // The loader hook that lists the modules, for the generated app's run; not for the layers.
    FLOOR_PROBE_MODULES: modules ? '1' : '',
    POD_NAMESPACE: namespace,
    POD_NAME: `floor-${Date.now()}`,
    // As in a pod (bench/lib/pod-credentials.mjs), else a kubeconfig file.
    ...(serviceAccount ? {} : { KUBECONFIG: control.kubeconfigPath }),
    METRICS_BIND_ADDRESS: `127.0.0.1:${metrics}`,
    HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${health}`,
    LEADER_ELECTION_NAMESPACE: namespace,
    LEADER_ELECTION_ID: `floor-${Date.now()}`,
    PORT: String(await freePort()),
    NO_COLOR: '1',
  };
  const startedAt = performance.now();
  const pod = serviceAccount && inPodCommand(serviceAccount, process.execPath, [main]);
  const child = pod
    ? spawn(pod.command, pod.args, { cwd: app, env: { ...env, ...pod.env }, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [main], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.output = [];
  child.lines = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      child.output.push(chunk);
      for (const line of chunk.split('\n')) if (line) child.lines.push({ at: performance.now() - startedAt, line });
    });
  }
  child.exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, startedAt, health, probeOut };
}

async function stopOperator(child) {
  child.kill('SIGTERM');
  const exited = await Promise.race([child.exited.then(() => true), sleep(20_000).then(() => false)]);
  if (!exited) {
    child.kill('SIGKILL');
    await child.exited;
  }
}

/** Which package each loaded module belongs to, and how many bytes of source each loaded. */
function modulesByPackage(modules) {
  const packages = new Map();
  for (const { url } of modules) {
    if (!url.startsWith('file:')) continue;
    const path = fileURLToPath(url);
    const match =
      /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path) ??
      /\/packages\/([^/]+)\//.exec(path) ??
      /nestor-floor-[^/]+\/(dist)\//.exec(path);
    const name = match
      ? match[0].includes('/packages/')
        ? `@nestor/${match[1]}`
        : match[1] === 'dist'
          ? '(app)'
          : match[1]
      : '(other)';
    let bytes = 0;
    try {
      bytes = readFileSync(path).length;
    } catch {
      // a module generated in memory: no file to weigh
    }
    const entry = packages.get(name) ?? { modules: 0, bytes: 0 };
    entry.modules++;
    entry.bytes += bytes;
    packages.set(name, entry);
  }
  return Object.fromEntries([...packages].sort((a, b) => b[1].bytes - a[1].bytes));
}

/**
 * RSS sampled every second for the idle time: the last sample, and the lowest. V8's memory
 * reducer shrinks the heap some 10-20 s into an idle period, so a short wait reads a floor
 * a few MB above the one a long-idle pod shows.
 */
async function idleRss(child) {
  let last;
  let min;
  for (let waited = 0; waited < idleMs; waited += 1000) {
    await sleep(1000);
    if (child.exitCode !== null) break;
    last = procStatus(child.pid);
    if (!min || last.rss < min.rss) min = last;
  }
  return { last, min };
}

async function floorRun(app, deployEnv, control, namespace) {
  const { child, startedAt, health, probeOut } = await startOperator(app, deployEnv, control, namespace);
  try {
    await waitFor(
      '/readyz',
      async () => (await httpStatus(`http://127.0.0.1:${health}/readyz`)) === 200,
      60_000,
      child,
    );
    const readyMs = performance.now() - startedAt;
    const { last: idle, min: idleMin } = await idleRss(child);
    const probed = await probeAfterGc(child, probeOut);
    const settled = procStatus(child.pid);
    return {
      readyMs,
      idle,
      idleMin,
      settled,
      probe: { before: probed.before, after: probed.after },
      packages: modulesByPackage(probed.modules),
      moduleCount: probed.modules.length,
      modules: probed.modules.map(({ url }) =>
        url.replace(/^file:\/\/.*?node_modules\//, '').replace(/^file:\/\/.*?\/packages\//, 'packages/'),
      ),
    };
  } finally {
    await stopOperator(child);
  }
}

/** Spawn to /readyz and to the first reconcile of one CachePool that waits for it. */
async function startupRun(app, deployEnv, control, namespace) {
  const name = `pool-${Date.now()}`;
  const path = `/apis/floor.nestor.dev/v1alpha1/namespaces/${namespace}/cachepools`;
  await control.client.request('POST', path, {
    apiVersion: 'floor.nestor.dev/v1alpha1',
    kind: 'CachePool',
    metadata: { name },
    spec: { replicas: 1 },
  });
  const { child, startedAt, health } = await startOperator(app, deployEnv, control, namespace);
  try {
    const [readyMs, reconciledMs] = await Promise.all([
      waitFor(
        '/readyz',
        async () => (await httpStatus(`http://127.0.0.1:${health}/readyz`)) === 200 && performance.now() - startedAt,
        60_000,
        child,
      ),
      waitFor(
        'the first reconcile',
        async () => {
          const pool = await control.client.request('GET', `${path}/${name}`);
          return pool.status?.observedGeneration === pool.metadata.generation && performance.now() - startedAt;
        },
        60_000,
        child,
      ),
    ]);
    const nestStarted = child.lines.find((l) => /Nest application successfully started/.test(l.line))?.at;
    return { readyMs, reconciledMs, nestStartedMs: nestStarted ?? NaN, rssAfter: procStatus(child.pid).rss };
  } finally {
    await stopOperator(child);
    await control.client.request('DELETE', `${path}/${name}`).catch(() => {});
  }
}

/**
 * The floor by layer (bench/lib/floor-layers.mjs): each main file idle for the same time,
 * RSS from outside, then the probe's figures after the garbage settled. With --before, the
 * same layer from the other checkout runs right after each of ours, so drift on this shared
 * machine falls on both alike.
 */
async function layerCosts(apps, deployEnv, control, namespace) {
  const layers = LAYERS.filter((layer) => !opts.layer?.length || opts.layer.includes(layer.key));
  for (const app of Object.values(apps)) {
    await mkdir(join(app, 'dist', 'floor-layers'), { recursive: true });
    for (const { file, source } of layers)
      if (source !== undefined) await writeFile(join(app, 'dist', 'floor-layers', file), source);
  }
  const samples = new Map();
  for (let i = 0; i < runs; i++) {
    for (const layer of layers) {
      for (const [variant, app] of Object.entries(apps)) {
        const sample = await layerRun(app, layer, deployEnv, control, namespace);
        const key = `${layer.key}@${variant}`;
        samples.set(key, [...(samples.get(key) ?? []), sample]);
        process.stderr.write(
          `layer ${key} run ${i + 1}: idle ${mb(sample.idle.rss)} MB, after GC ${mb(sample.settled.rss)} MB, heap used ${mb(sample.heapUsed)} MB\n`,
        );
      }
    }
  }
  const rows = [];
  for (const layer of layers)
    for (const variant of Object.keys(apps)) {
      const runsOf = samples.get(`${layer.key}@${variant}`);
      const m = (pick) => median(runsOf.map(pick));
      rows.push({
        key: layer.key,
        variant,
        label: layer.label,
        reference: layer.reference,
        rss: m((s) => s.idle.rss),
        rssAnon: m((s) => s.idle.rssAnon),
        rssFile: m((s) => s.idle.rssFile),
        settledRss: m((s) => s.settled.rss),
        heapUsed: m((s) => s.heapUsed),
        heapPhysical: m((s) => s.heapPhysical),
        samples: runsOf.map((s) => ({ idle: s.idle.rss, settled: s.settled.rss, heapUsed: s.heapUsed })),
      });
    }
  return rows;
}

async function layerRun(app, layer, deployEnv, control, namespace) {
  const { child, probeOut } = await startOperator(
    app,
    deployEnv,
    control,
    namespace,
    join('dist', 'floor-layers', layer.file),
    { modules: false },
  );
  try {
    const { last: idle } = await idleRss(child);
    if (child.exitCode !== null) throw new Error(`${layer.file} exited (${child.exitCode}):\n${child.output.join('')}`);
    const probed = await probeAfterGc(child, probeOut);
    return {
      idle,
      settled: procStatus(child.pid),
      heapUsed: probed.after.heap.used_heap_size,
      heapPhysical: probed.after.heap.total_physical_size,
    };
  } finally {
    await stopOperator(child);
  }
}

/** Signals the probe (bench/lib/floor-probe.cjs) to settle the garbage, and reads what it wrote. */
async function probeAfterGc(child, probeOut) {
  child.kill('SIGWINCH');
  const probed = await waitFor(
    'the probe',
    async () => {
      try {
        return JSON.parse(await readFile(probeOut, 'utf8'));
      } catch {
        return undefined;
      }
    },
    30_000,
    child,
  );
  await rm(probeOut, { force: true });
  return probed;
}

const IMPORTS = [
  'reflect-metadata',
  'rxjs',
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@kubernetes/client-node',
  'prom-client',
  '@opentelemetry/api',
  'yaml',
  '@nestor/core',
  '@nestor/operator/runtime',
  '@nestor/operator',
  'reflect-metadata,@nestjs/core,@nestjs/platform-express',
  'reflect-metadata,@nestjs/core,@nestjs/platform-express,@nestor/operator',
];

/**
 * What each part costs an operator that loads it too: imported over the runtime entry
 * (whose ~300 modules already made Node's loader hot enough to page in V8's optimizing
 * compilers, as in a running operator), so that the figure is the part's own. The parts an
 * operator now loads only when its options use them, and the wholes it no longer loads.
 */
const RUNTIME = '@nestor/operator/runtime';
const dist = (path) => pathToFileURL(join(root, 'packages', path)).href;
const PARTS = [
  ['node:http2 (the HTTP/2 transport)', `node:http2,${dist('core/dist/http2-exchange.js')}`],
  ["protobuf tables (built-in kinds' schema)", dist('core/dist/protobuf/generated/schema-table.js')],
  [
    'webhook server: listener, intake, certificates, routes',
    `${dist('operator/dist/serving/webhook-listener.js')},${dist('operator/dist/serving/webhook-routes.js')}`,
  ],
  ['sharding (coordinator, assigner, shard Leases)', dist('operator/dist/sharding/shard-coordinator.js')],
  ['@opentelemetry/api (tracing)', '@opentelemetry/api'],
  ["prom-client's index (Pushgateway, Summary, cluster; OpenTelemetry)", 'prom-client'],
  ["rxjs's index (all of RxJS)", 'rxjs'],
  ['@kubernetes/client-node whole (its generated API)', '@kubernetes/client-node'],
  ['yaml (a kubeconfig file)', 'yaml'],
];

function importCost(nodeOptions, specifier, over) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const out = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        ...nodeOptions.split(/\s+/).filter(Boolean),
        join(here, 'lib', 'import-cost.mjs'),
        specifier,
        ...(over ? [over] : []),
      ],
      { encoding: 'utf8' },
    );
    if (out.status !== 0) throw new Error(`import ${specifier}: ${out.stderr}`);
    samples.push(JSON.parse(out.stdout.trim().split('\n').pop()));
  }
  const keys = Object.keys(samples[0].delta);
  return {
    specifier,
    ...(over ? { over } : {}),
    modules: samples[0].modules,
    base: Object.fromEntries(keys.map((k) => [k, median(samples.map((s) => s.base[k]))])),
    delta: Object.fromEntries(keys.map((k) => [k, median(samples.map((s) => s.delta[k]))])),
  };
}

const importCosts = (nodeOptions) => ['none', ...IMPORTS].map((specifier) => importCost(nodeOptions, specifier));
const partCosts = (nodeOptions) =>
  PARTS.map(([label, specifier]) => ({ label, ...importCost(nodeOptions, specifier, RUNTIME) }));

const mb = (bytes) => (bytes / MB).toFixed(1);

function render(result) {
  const lines = [];
  const f = result.floor;
  if (f) {
    lines.push(`## Idle operator (${result.runs} runs, medians; ${result.idleMs / 1000} s idle after ready)`, '');
    lines.push('| figure | MB |', '|---|---:|');
    lines.push(`| RSS idle, from outside (VmRSS) | ${mb(f.idleRss)} |`);
    lines.push(`| of it anonymous / file-backed | ${mb(f.idleRssAnon)} / ${mb(f.idleRssFile)} |`);
    lines.push(`| lowest sample while idle | ${mb(f.idleRssMin)} |`);
    lines.push(`| RSS after the garbage settled | ${mb(f.settledRss)} |`);
    lines.push(`| V8 heap: physical / used | ${mb(f.heapPhysical)} / ${mb(f.heapUsed)} |`);
    lines.push(
      `| old space / code space / large objects / new space (used) | ${mb(f.oldSpace)} / ${mb(f.codeSpace)} / ${mb(f.largeObjects)} / ${mb(f.newSpace)} |`,
    );
    lines.push(`| bytecode and metadata | ${mb(f.bytecode)} |`);
    lines.push(`| external / array buffers | ${mb(f.external)} / ${mb(f.arrayBuffers)} |`);
    lines.push(`| ready after, ms | ${f.readyMs.toFixed(0)} |`);
    lines.push(`| modules loaded | ${f.moduleCount} |`, '');
    lines.push('### Resident memory by mapping (first run, after the garbage settled)', '');
    lines.push('| mapping | MB |', '|---|---:|');
    for (const [name, bytes] of Object.entries(result.mappings))
      lines.push(`| ${name.replace(/^.*node_modules\//, '')} | ${mb(bytes)} |`);
    lines.push('');
    lines.push('### Modules loaded at start, by package (first run)', '');
    lines.push('| package | modules | source KB |', '|---|---:|---:|');
    for (const [name, p] of Object.entries(result.packages))
      lines.push(`| ${name} | ${p.modules} | ${(p.bytes / 1024).toFixed(0)} |`);
    lines.push('');
  }
  if (result.layers) {
    lines.push(
      `## The floor by layer (idle ${result.idleMs / 1000} s from spawn, medians of ${result.runs}${result.before ? `; @before: ${result.before}` : ''})`,
      '',
      'RSS idle is read from outside before the probe runs; after GC, once the probe settled the garbage.',
      '',
    );
    lines.push(
      '| layer | RSS idle MB | + MB | anon | file | RSS after GC | heap used after GC |',
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    const previous = new Map();
    for (const row of result.layers) {
      const last = previous.get(row.variant);
      const step = last && !row.reference ? mb(row.rss - last.rss) : '';
      const name = row.variant === 'after' ? row.label : `${row.label} @${row.variant}`;
      lines.push(
        `| ${name} | ${mb(row.rss)} | ${step} | ${mb(row.rssAnon)} | ${mb(row.rssFile)} | ${mb(row.settledRss)} | ${mb(row.heapUsed)} |`,
      );
      if (!row.reference) previous.set(row.variant, row);
    }
    lines.push('');
  }
  if (result.startup) {
    const s = result.startup;
    lines.push(`## Start-up with one CachePool waiting (${result.runs} runs, medians)`, '');
    lines.push('| from spawn to | ms |', '|---|---:|');
    lines.push(`| "Nest application successfully started" | ${s.nestStartedMs.toFixed(0)} |`);
    lines.push(`| /readyz answers 200 | ${s.readyMs.toFixed(0)} |`);
    lines.push(`| the first reconcile's status is written | ${s.reconciledMs.toFixed(0)} |`, '');
  }
  if (result.imports) {
    lines.push(
      `## Import costs (fresh process, ${result.nodeOptions}, medians of ${result.runs}; after the garbage settled)`,
      '',
    );
    const base = result.imports[0].base;
    lines.push(
      `Bare Node: RSS ${mb(base.rss)} MB (${mb(base.rssAnon)} anonymous, ${mb(base.rssFile)} file-backed).`,
      '',
    );
    lines.push('| import | modules | RSS | anon | file | V8 heap phys | old space | code | bytecode | external |');
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of result.imports.slice(1)) {
      const d = r.delta;
      lines.push(
        `| ${r.specifier.replaceAll(',', ' + ')} | ${r.modules} | ${mb(d.rss)} | ${mb(d.rssAnon)} | ${mb(d.rssFile)} | ${mb(d.heapPhysical)} | ${mb(d.oldSpace)} | ${mb(d.codeSpace)} | ${mb(d.bytecode)} | ${mb(d.external)} |`,
      );
    }
    lines.push('');
  }
  if (result.parts) {
    lines.push(
      `## What each part costs, loaded over ${RUNTIME} (fresh process, medians of ${result.runs}; after the garbage settled)`,
      '',
      '| part | modules | RSS MB | V8 heap used MB |',
      '|---|---:|---:|---:|',
    );
    for (const p of result.parts)
      lines.push(`| ${p.label} | ${p.modules} | ${mb(p.delta.rss)} | ${mb(p.delta.heapUsed)} |`);
    lines.push('');
  }
  return lines.join('\n');
}

const app = opts.app ?? (await scaffold());
const deployEnv = await deploymentEnvironment(app);
process.stderr.write(`app: ${app}\nDeployment environment: ${JSON.stringify(deployEnv)}\n`);
const control = await TestEnvironment.start({ useExistingCluster: false, crds: [join(app, 'deploy', 'crds')] });
const floorNamespace = await control.createNamespace('floor');
const serviceAccount =
  opts['kubeconfig-file'] || !canMountServiceAccount()
    ? undefined
    : await serviceAccountFiles(control.kubeconfigPath, floorNamespace);
process.stderr.write(
  serviceAccount
    ? 'credentials: the service account files, mounted for each operator (as in a pod)\n'
    : 'credentials: KUBECONFIG (a kubeconfig file: the YAML parser loads, as it would not in a pod)\n',
);
const result = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  runs,
  idleMs,
  nodeOptions: deployEnv.NODE_OPTIONS ?? '',
  credentials: serviceAccount ? 'service account (in-pod paths)' : 'kubeconfig file',
};
try {
  const namespace = floorNamespace;
  const floors = [];
  for (let i = 0; opts.floor && i < runs; i++) {
    floors.push(await floorRun(app, deployEnv, control, namespace));
    process.stderr.write(
      `floor run ${i + 1}: idle RSS ${mb(floors.at(-1).idle.rss)} MB, settled ${mb(floors.at(-1).settled.rss)} MB\n`,
    );
  }
  const m = (pick) => median(floors.map(pick));
  if (opts.floor)
    result.floor = {
      idleRss: m((r) => r.idle.rss),
      idleRssAnon: m((r) => r.idle.rssAnon),
      idleRssFile: m((r) => r.idle.rssFile),
      idleRssMin: m((r) => r.idleMin.rss),
      settledRss: m((r) => r.settled.rss),
      heapPhysical: m((r) => r.probe.after.heap.total_physical_size),
      heapUsed: m((r) => r.probe.after.heap.used_heap_size),
      oldSpace: m((r) => r.probe.after.spaces.old_space.used),
      codeSpace: m((r) => r.probe.after.spaces.code_space.used),
      largeObjects: m((r) => r.probe.after.spaces.large_object_space.used),
      newSpace: m((r) => r.probe.after.spaces.new_space.used),
      bytecode: m((r) => r.probe.after.code.bytecode_and_metadata_size),
      external: m((r) => r.probe.after.external),
      arrayBuffers: m((r) => r.probe.after.arrayBuffers),
      readyMs: m((r) => r.readyMs),
      moduleCount: m((r) => r.moduleCount),
    };
  if (opts.floor) {
    result.floorRuns = floors.map(({ packages: _packages, modules: _modules, ...r }) => r);
    result.packages = floors[0].packages;
    result.modules = floors[0].modules;
    result.mappings = Object.fromEntries(
      Object.entries(floors[0].probe.after.mappings)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12),
    );
  }
  if (opts.layers) {
    const apps = { after: app };
    if (opts.before) {
      result.before = opts.before;
      apps.before = await beforeApp(app, opts.before);
    }
    result.layers = await layerCosts(apps, deployEnv, control, namespace);
    if (opts.before) await rm(apps.before, { recursive: true, force: true });
  }
  if (opts.startup) {
    const startups = [];
    for (let i = 0; i < runs; i++) startups.push(await startupRun(app, deployEnv, control, namespace));
    result.startup = Object.fromEntries(Object.keys(startups[0]).map((k) => [k, median(startups.map((s) => s[k]))]));
    result.startupRuns = startups;
  }
} finally {
  await control.stop();
  if (serviceAccount) await rm(serviceAccount.dir, { recursive: true, force: true });
  if (!opts.app && !opts.keep) await rm(app, { recursive: true, force: true });
}
if (opts.imports) {
  result.imports = importCosts(result.nodeOptions);
  result.parts = partCosts(result.nodeOptions);
}

const markdown = render(result);
process.stdout.write(`${markdown}\n`);
const stamp = result.date.slice(0, 16).replace(/[:]/g, '').replace('T', 'T');
await mkdir(join(here, 'results'), { recursive: true });
await writeFile(join(here, 'results', `${stamp}-${opts.label}.json`), `${JSON.stringify(result, null, 2)}\n`);
