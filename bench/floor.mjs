#!/usr/bin/env node
// The floor: what an operator as `nestor init` + `nestor create api` generate it holds when
// it has nothing to do, run as its generated Deployment runs it, and what each import costs.
//
//   npm run build && node bench/floor.mjs            scaffold, 3 runs, per-import costs
//   node bench/floor.mjs --runs 5 --idle-ms 60000    more runs, a longer idle wait (default 30 s)
//   node bench/floor.mjs --app /tmp/app              reuse a scaffold (kept with --keep)
//   node bench/floor.mjs --no-imports                the operator only
//
// The app: packages/cli/fixtures/nest12-app (a `nest new` starter, express included) gets
// `nestor init` and `nestor create api`, is built with tsc, and `nestor manifests` writes its
// Deployment. Each run starts `node dist/main.js` with that Deployment's environment
// (NODE_OPTIONS, NODE_ENV, the bind addresses on free loopback ports, leader election) against
// a private control plane, waits for /readyz, idles, and reads /proc/<pid>/status (RSS as the
// kubelet and `ps` see it). bench/lib/floor-probe.mjs, loaded with --import, then settles the
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
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { TestEnvironment } from '@nestor/testing';
import { median as medianOf } from './lib/common.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const nestor = join(root, 'packages', 'cli', 'dist', 'main.js');
const probe = join(here, 'lib', 'floor-probe.mjs');
const MB = 2 ** 20;

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    'idle-ms': { type: 'string', default: '30000' },
    app: { type: 'string' },
    keep: { type: 'boolean', default: false },
    imports: { type: 'boolean', default: true },
    startup: { type: 'boolean', default: true },
    layers: { type: 'boolean', default: true },
    label: { type: 'string', default: 'floor' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  allowNegative: true,
});
if (opts.help) {
  process.stdout.write(
    readFileSync(fileURLToPath(import.meta.url), 'utf8')
      .split('\n')
      .slice(1, 6)
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
async function startOperator(app, deployEnv, control, namespace, main = 'dist/main.js', withProbe = true) {
  const health = await freePort();
  const metrics = await freePort();
  const probeOut = join(app, `probe-${process.pid}-${Date.now()}.json`);
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...deployEnv,
    // The Deployment's options, and the probe (bench/lib/floor-probe.mjs).
    NODE_OPTIONS: `${deployEnv.NODE_OPTIONS ?? ''}${withProbe ? ` --import ${probe}` : ''}`.trim(),
    FLOOR_PROBE_OUT: probeOut,
    POD_NAMESPACE: namespace,
    POD_NAME: `floor-${Date.now()}`,
    KUBECONFIG: control.kubeconfigPath,
    METRICS_BIND_ADDRESS: `127.0.0.1:${metrics}`,
    HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${health}`,
    LEADER_ELECTION_NAMESPACE: namespace,
    LEADER_ELECTION_ID: `floor-${Date.now()}`,
    PORT: String(await freePort()),
    NO_COLOR: '1',
  };
  const startedAt = performance.now();
  const child = spawn(process.execPath, [main], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    child.kill('SIGUSR2');
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
    const settled = procStatus(child.pid);
    await rm(probeOut, { force: true });
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
 * The floor by layer: each a main file beside the app's own (same node_modules, same
 * Deployment environment), each idle for the same time, RSS from outside. The difference
 * between two rows is what the layer costs.
 */
const LAYERS = [
  ['Node alone', 'bare.js', `setInterval(() => {}, 1 << 30);\n`],
  [
    '+ Nest: an application context, empty module (@nestjs/core, @nestjs/common, rxjs)',
    'nest-context.js',
    `import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
class Empty {}
Reflect.decorate([Module({})], Empty);
const app = await NestFactory.createApplicationContext(Empty);
app.enableShutdownHooks();
setInterval(() => {}, 1 << 30);
`,
  ],
  [
    '+ import @nestor/operator (nothing started)',
    'nest-context-import.js',
    `import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import '@nestor/operator';
class Empty {}
Reflect.decorate([Module({})], Empty);
const app = await NestFactory.createApplicationContext(Empty);
app.enableShutdownHooks();
setInterval(() => {}, 1 << 30);
`,
  ],
  [
    '+ OperatorModule.forRoot() and the CachePool controller, as an application context (no HTTP app)',
    'operator-context.js',
    `import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OperatorModule } from '@nestor/operator';
import { CachePoolModule } from '../cache-pool/cache-pool.module.js';
class Operator {}
Reflect.decorate([Module({ imports: [OperatorModule.forRoot(), CachePoolModule] })], Operator);
const app = await NestFactory.createApplicationContext(Operator);
app.enableShutdownHooks();
`,
  ],
  ["+ the starter's HTTP app (express, AppController): the generated dist/main.js", '../main.js', undefined],
  [
    'for reference: the runtime alone, no Nest (@nestor/operator/runtime: a Manager, one CachePool controller, no servers)',
    'runtime.js',
    `import { Manager, Transport, loadKubeConfig } from '@nestor/operator/runtime';
const transport = await Transport.fromKubeConfig(loadKubeConfig());
const manager = new Manager({ transport });
const pools = { group: 'floor.nestor.dev', version: 'v1alpha1', kind: 'CachePool', plural: 'cachepools', namespaced: true };
manager.addController({ name: 'cachepool', resource: pools, reconcile: async () => {} });
await manager.start();
process.once('SIGTERM', () => manager.stop().then(() => process.exit(0)));
`,
  ],
  [
    'for reference: the starter alone, as `nest new` leaves it (Nest, express, no operator)',
    'starter.js',
    `import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppController } from '../app.controller.js';
import { AppService } from '../app.service.js';
class Starter {}
Reflect.decorate([Module({ controllers: [AppController], providers: [AppService] })], Starter);
const app = await NestFactory.create(Starter);
app.enableShutdownHooks();
await app.listen(process.env.PORT ?? 3000);
`,
  ],
];

async function layerCosts(app, deployEnv, control, namespace) {
  const folder = join(app, 'dist', 'floor-layers');
  await mkdir(folder, { recursive: true });
  const rows = [];
  for (const [label, file, source] of LAYERS) {
    if (source !== undefined) await writeFile(join(folder, file), source);
    const samples = [];
    for (let i = 0; i < runs; i++) {
      const { child } = await startOperator(
        app,
        deployEnv,
        control,
        namespace,
        join('dist', 'floor-layers', file),
        false,
      );
      try {
        const { last } = await idleRss(child);
        if (child.exitCode !== null) throw new Error(`${file} exited (${child.exitCode}):\n${child.output.join('')}`);
        samples.push(last);
      } finally {
        await stopOperator(child);
      }
    }
    const row = {
      label,
      rss: median(samples.map((s) => s.rss)),
      rssAnon: median(samples.map((s) => s.rssAnon)),
      rssFile: median(samples.map((s) => s.rssFile)),
    };
    rows.push(row);
    process.stderr.write(`layer ${label}: ${mb(row.rss)} MB\n`);
  }
  return rows;
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

function importCosts(nodeOptions) {
  const results = [];
  for (const specifier of ['none', ...IMPORTS]) {
    const samples = [];
    for (let i = 0; i < runs; i++) {
      const out = spawnSync(
        process.execPath,
        ['--expose-gc', ...nodeOptions.split(/\s+/).filter(Boolean), join(here, 'lib', 'import-cost.mjs'), specifier],
        { encoding: 'utf8' },
      );
      if (out.status !== 0) throw new Error(`import ${specifier}: ${out.stderr}`);
      samples.push(JSON.parse(out.stdout.trim().split('\n').pop()));
    }
    const keys = Object.keys(samples[0].delta);
    results.push({
      specifier,
      modules: samples[0].modules,
      base: Object.fromEntries(keys.map((k) => [k, median(samples.map((s) => s.base[k]))])),
      delta: Object.fromEntries(keys.map((k) => [k, median(samples.map((s) => s.delta[k]))])),
    });
  }
  return results;
}

const mb = (bytes) => (bytes / MB).toFixed(1);

function render(result) {
  const lines = [];
  const f = result.floor;
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
  if (result.layers) {
    lines.push(
      `## The floor by layer (idle ${result.idleMs / 1000} s, RSS from outside, medians of ${result.runs})`,
      '',
    );
    lines.push('| layer | RSS MB | + MB | anon | file |', '|---|---:|---:|---:|---:|');
    let previous;
    for (const row of result.layers) {
      const step = previous && !row.label.startsWith('for reference') ? mb(row.rss - previous.rss) : '';
      lines.push(`| ${row.label} | ${mb(row.rss)} | ${step} | ${mb(row.rssAnon)} | ${mb(row.rssFile)} |`);
      if (!row.label.startsWith('for reference')) previous = row;
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
  return lines.join('\n');
}

const app = opts.app ?? (await scaffold());
const deployEnv = await deploymentEnvironment(app);
process.stderr.write(`app: ${app}\nDeployment environment: ${JSON.stringify(deployEnv)}\n`);
const control = await TestEnvironment.start({ useExistingCluster: false, crds: [join(app, 'deploy', 'crds')] });
const result = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  runs,
  idleMs,
  nodeOptions: deployEnv.NODE_OPTIONS ?? '',
};
try {
  const namespace = await control.createNamespace('floor');
  const floors = [];
  for (let i = 0; i < runs; i++) {
    floors.push(await floorRun(app, deployEnv, control, namespace));
    process.stderr.write(
      `floor run ${i + 1}: idle RSS ${mb(floors.at(-1).idle.rss)} MB, settled ${mb(floors.at(-1).settled.rss)} MB\n`,
    );
  }
  const m = (pick) => median(floors.map(pick));
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
  result.floorRuns = floors.map(({ packages: _packages, modules: _modules, ...r }) => r);
  result.packages = floors[0].packages;
  result.modules = floors[0].modules;
  result.mappings = Object.fromEntries(
    Object.entries(floors[0].probe.after.mappings)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12),
  );
  if (opts.layers) result.layers = await layerCosts(app, deployEnv, control, namespace);
  if (opts.startup) {
    const startups = [];
    for (let i = 0; i < runs; i++) startups.push(await startupRun(app, deployEnv, control, namespace));
    result.startup = Object.fromEntries(Object.keys(startups[0]).map((k) => [k, median(startups.map((s) => s[k]))]));
    result.startupRuns = startups;
  }
} finally {
  await control.stop();
  if (!opts.app && !opts.keep) await rm(app, { recursive: true, force: true });
}
if (opts.imports) result.imports = importCosts(result.nodeOptions);

const markdown = render(result);
process.stdout.write(`${markdown}\n`);
const stamp = result.date.slice(0, 16).replace(/[:]/g, '').replace('T', 'T');
await mkdir(join(here, 'results'), { recursive: true });
await writeFile(join(here, 'results', `${stamp}-${opts.label}.json`), `${JSON.stringify(result, null, 2)}\n`);
