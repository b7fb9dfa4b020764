#!/usr/bin/env node
// Where an informer's memory per cached object goes: a heap snapshot before and after the sync
// of N objects of one kind, diffed by node and, for each node, by the property that holds it
// (payload string, metadata object, map table, ...), per object. Then the process's RSS by
// mapping: V8's pages, malloc's heap, the rest.
//   npm run build && node bench/micro/cache-heap.mjs [configmap|widget] [objects=10000] [--dist DIR]
// --dist: the @nestor/operator build to measure (e.g. another checkout's packages/operator/dist).
// NESTOR_HTTP2=true|false sets the transport's http2 option. Runs its own control plane; the
// informer and the snapshots run in a child process, so the tally holds nothing of this one.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';

const here = fileURLToPath(import.meta.url);
const WIDGETS = { group: 'bench.nestor.dev', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const MB = (b) => (b / 2 ** 20).toFixed(1);

if (process.argv[2] === '--child') await child(JSON.parse(process.argv[3]));
else await main();

async function main() {
  const args = process.argv.slice(2);
  const distAt = args.indexOf('--dist');
  const dist = distAt >= 0 ? args.splice(distAt, 2)[1] : undefined;
  const kind = args[0] ?? 'configmap';
  const count = Number(args[1] ?? 10_000);
  const { Transport } = await import('@nestor/core');
  const { parallel, TestEnvironment } = await import('@nestor/testing');
  const { SYNC_KINDS, WIDGET_CRD } = await import('../lib/common.mjs');
  if (!SYNC_KINDS[kind]) throw new Error(`kind ${kind}: use ${Object.keys(SYNC_KINDS).join(' or ')}`);
  const env = await TestEnvironment.start({ useExistingCluster: false, crds: [WIDGET_CRD] });
  const dir = join(tmpdir(), `cache-heap-${process.pid}`);
  try {
    const namespace = await env.createNamespace('heap');
    const load = await Transport.fromKubeConfig(env.kubeConfig, { maxSockets: 64 });
    const { path, body } = SYNC_KINDS[kind];
    const names = Array.from({ length: count }, (_, i) => `${kind}-${i}`);
    await parallel(names, 32, (name) => load.json('POST', path(namespace), { body: body(name) }));
    load.close();
    const job = { kubeconfig: env.kubeconfigPath, namespace, kind, dist, dir };
    const run = spawnSync(
      process.execPath,
      ['--expose-gc', '--max-semi-space-size=4', here, '--child', JSON.stringify(job)],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    if (run.status !== 0) throw new Error(`the measuring process failed (${run.status ?? run.signal})`);
    const before = tally(JSON.parse(readFileSync(join(dir, 'before.heapsnapshot'), 'utf8')));
    const after = tally(JSON.parse(readFileSync(join(dir, 'after.heapsnapshot'), 'utf8')));
    const rows = [];
    for (const [key, [n, size]] of after) {
      const [n0, size0] = before.get(key) ?? [0, 0];
      if (Math.abs(size - size0) / count >= 2) rows.push([key, (n - n0) / count, (size - size0) / count]);
    }
    rows.sort((a, b) => b[2] - a[2]);
    const total = rows.reduce((sum, r) => sum + r[2], 0);
    console.log(`\nheap per cached object, by node @ what holds it (rows of 2 B or more): ${total.toFixed(0)} B`);
    for (const [key, n, bytes] of rows.slice(0, 30))
      console.log(`${bytes.toFixed(1).padStart(8)} B ${n.toFixed(2).padStart(6)}/object  ${key}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await env.stop();
  }
}

/** The measuring process: snapshot, sync one informer, RSS by mapping (at once, and after 15 s idle), snapshot. */
async function child({ kubeconfig, namespace, kind, dist, dir }) {
  const operator = await import(dist ? pathToFileURL(join(dist, 'runtime-entry.js')).href : '@nestor/operator/runtime');
  const { ClusterConfig, ConfigMap, InformerCache, Transport } = operator;
  const http2 = process.env.NESTOR_HTTP2;
  const transport = await Transport.fromKubeConfig(ClusterConfig.fromFile(kubeconfig), {
    ...(http2 ? { http2: http2 === 'true' } : {}),
  });
  const { mkdirSync } = await import('node:fs');
  mkdirSync(dir, { recursive: true });
  const rssBefore = memory();
  v8.writeHeapSnapshot(join(dir, 'before.heapsnapshot'));
  const { informer } = new InformerCache(transport).acquire(kind === 'widget' ? WIDGETS : ConfigMap, { namespace });
  const t = performance.now();
  await informer.whenSynced();
  const syncMs = performance.now() - t;
  const rssAfter = memory();
  // And once the process has idled a while: V8's memory reducer gives back what a fast sync grew.
  await new Promise((resolve) => setTimeout(resolve, 15_000));
  const rssIdle = memory();
  v8.writeHeapSnapshot(join(dir, 'after.heapsnapshot'));
  console.log(`${kind}: ${informer.size} objects synced in ${syncMs.toFixed(0)} ms`);
  for (const [label, m] of [
    ['before', rssBefore],
    ['after', rssAfter],
    ['idle', rssIdle],
  ])
    console.log(
      `${label.padEnd(6)} RSS ${m.rss} MB: heapUsed ${m.heapUsed}, V8 pages ${m.v8}, malloc heap ${m.malloc}, other anonymous ${m.other}, files ${m.files}; spaces ${m.spaces}`,
    );
  writeFileSync(join(dir, 'done'), '');
  process.exit(0);
}

function memory() {
  globalThis.gc();
  globalThis.gc();
  const sums = { v8: 0, malloc: 0, other: 0, files: 0 };
  for (const mapping of readFileSync('/proc/self/smaps', 'utf8').split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)) {
    const [range, , , , , path = ''] = mapping.split('\n')[0].split(/\s+/);
    const [a, b] = range.split('-').map((x) => parseInt(x, 16));
    const kB = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(mapping)?.[1] ?? 0) * 1024;
    const anon = kB('Anonymous');
    sums.files += kB('Rss') - anon;
    // V8 reserves its pages 256 KiB at a time; glibc's main arena is [heap].
    if (path === '[heap]') sums.malloc += anon;
    else if (!path && b - a === 256 * 1024) sums.v8 += anon;
    else sums.other += anon;
  }
  const { rss, heapUsed } = process.memoryUsage();
  // Each V8 space: committed / used, MB (where V8's pages beyond the used heap are).
  const spaces = v8
    .getHeapSpaceStatistics()
    .filter((space) => space.space_size > 0)
    .map((space) => `${space.space_name} ${MB(space.space_size)}/${MB(space.space_used_size)}`)
    .join(', ');
  return { ...Object.fromEntries(Object.entries({ rss, heapUsed, ...sums }).map(([k, v]) => [k, MB(v)])), spaces };
}

/** { "type name @ holder.property": [count, bytes] } over a snapshot's nodes. */
function tally(snapshot) {
  const { node_fields, node_types, edge_fields, edge_types } = snapshot.snapshot.meta;
  const NF = node_fields.length;
  const EF = edge_fields.length;
  const types = node_types[0];
  const edgeTypes = edge_types[0];
  const { nodes, edges, strings } = snapshot;
  const TYPE = node_fields.indexOf('type');
  const NAME = node_fields.indexOf('name');
  const SIZE = node_fields.indexOf('self_size');
  const EDGES = node_fields.indexOf('edge_count');
  const E_TYPE = edge_fields.indexOf('type');
  const E_NAME = edge_fields.indexOf('name_or_index');
  const E_TO = edge_fields.indexOf('to_node');
  const holder = new Map();
  let e = 0;
  for (let n = 0; n < nodes.length; n += NF) {
    const from = `${strings[nodes[n + NAME]]}`;
    const fromType = types[nodes[n + TYPE]];
    for (let j = 0; j < nodes[n + EDGES]; j++, e += EF) {
      const to = edges[e + E_TO];
      const edgeType = edgeTypes[edges[e + E_TYPE]];
      if (holder.has(to) || edgeType === 'weak' || fromType === 'synthetic') continue;
      const named = edgeType === 'property' || edgeType === 'internal';
      holder.set(
        to,
        (named ? `${from}.${strings[edges[e + E_NAME]]}` : `${fromType}:${from}[${edgeType}]`).slice(0, 60),
      );
    }
  }
  const groups = new Map();
  for (let n = 0; n < nodes.length; n += NF) {
    const type = types[nodes[n + TYPE]];
    const name = /string/.test(type) ? '' : ` ${String(strings[nodes[n + NAME]]).slice(0, 40)}`;
    const key = `${type}${name} @ ${holder.get(n) ?? '?'}`;
    const group = groups.get(key) ?? [0, 0];
    group[0]++;
    group[1] += nodes[n + SIZE];
    groups.set(key, group);
  }
  return groups;
}
