#!/usr/bin/env node
// What part of an informer's initial sync is the process's first time, and what part is
// per object: a fresh operator process (as the Deployment runs it, --max-semi-space-size=4)
// syncs N ConfigMaps three times, each with a new InformerCache on one Transport. The first
// sync carries what a Node process pays once (code compiled, the protobuf schema loaded, the
// first connection's TLS); the later ones are the per-object work alone. Process CPU each.
//   npm run build && node bench/micro/sync-cold-warm.mjs [--objects 1000] [--runs 5]
//   --trees A,B: alternate two checkouts (each built, with node_modules), run by run
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = fileURLToPath(import.meta.url);

if (process.argv[2] === '--child') {
  // One operator process: import, transport, then three syncs.
  const [, , , tree, kubeconfig, namespace] = process.argv;
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const atStart = cpuMs();
  const entry = tree
    ? pathToFileURL(resolve(tree, 'packages/operator/dist/runtime-entry.js')).href
    : '@nestor/operator/runtime';
  const { ClusterConfig, ConfigMap, InformerCache, Transport } = await import(entry);
  const imported = cpuMs();
  const transport = await Transport.fromKubeConfig(ClusterConfig.fromFile(kubeconfig));
  const syncs = [];
  for (let i = 0; i < 3; i++) {
    const before = cpuMs();
    const cache = new InformerCache(transport);
    const { informer } = cache.acquire(ConfigMap, { namespace });
    await informer.whenSynced();
    syncs.push({ cpuMs: cpuMs() - before, objects: informer.size });
    cache.stop?.();
    cache.close?.();
  }
  process.stdout.write(
    JSON.stringify({ bootMs: atStart, importMs: imported - atStart, syncs, totalMs: cpuMs() }) + '\n',
  );
  process.exit(0);
}

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '5' },
    trees: { type: 'string' },
  },
});
const { parallel, TestEnvironment } = await import('@nestor/testing');
const { Transport } = await import('@nestor/operator/runtime');
const trees = args.trees ? args.trees.split(',') : [''];
const PAYLOAD = 'x'.repeat(860); // with metadata, ~1 KiB of JSON per object

const env = await TestEnvironment.start({ useExistingCluster: false });
try {
  const ns = await env.createNamespace('sync');
  const setup = await Transport.fromKubeConfig(env.kubeConfig);
  const names = Array.from({ length: Number(args.objects) }, (_, i) => `cm-${i}`);
  await parallel(names, 32, (name) =>
    setup.json('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { payload: PAYLOAD } },
    }),
  );
  setup.close();
  const results = Object.fromEntries(trees.map((tree) => [tree || 'current', []]));
  for (let run = 0; run < Number(args.runs); run++) {
    for (const tree of trees) {
      const out = await child(tree, env.kubeconfigPath, ns);
      results[tree || 'current'].push(out);
      process.stderr.write(`${tree || 'current'} ${JSON.stringify(out)}\n`);
    }
  }
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };
  const summary = Object.fromEntries(
    Object.entries(results).map(([tree, runs]) => [
      tree,
      {
        runs: runs.length,
        bootMs: median(runs.map((r) => r.bootMs)),
        importMs: median(runs.map((r) => r.importMs)),
        coldSyncMs: median(runs.map((r) => r.syncs[0].cpuMs)),
        warmSyncMs: median(runs.map((r) => (r.syncs[1].cpuMs + r.syncs[2].cpuMs) / 2)),
        processMs: median(runs.map((r) => r.totalMs)),
      },
    ]),
  );
  console.log(JSON.stringify({ node: process.version, objects: Number(args.objects), summary }, null, 2));
} finally {
  await env.stop();
}

function child(tree, kubeconfig, namespace) {
  return new Promise((resolveRun, reject) => {
    const proc = spawn(
      process.execPath,
      ['--max-semi-space-size=4', here, '--child', tree, kubeconfig, namespace],
      tree ? { cwd: tree } : {},
    );
    let out = '';
    let err = '';
    proc.stdout.on('data', (chunk) => (out += chunk));
    proc.stderr.on('data', (chunk) => (err += chunk));
    proc.on('exit', (code) => (code === 0 ? resolveRun(JSON.parse(out)) : reject(new Error(`child: ${code} ${err}`))));
  });
}
