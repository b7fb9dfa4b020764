#!/usr/bin/env node
// Summarizes a V8 CPU profile (.cpuprofile from `node --cpu-prof`, as `run.mjs --profile`
// writes for the Nestor child): self time by category and by function, and inclusive time
// of Nestor's own functions.
//   node bench/profile.mjs bench/results/profiles/churn-500.cpuprofile [--top 30]
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, json: { type: 'boolean', default: false } },
});
if (positionals.length === 0) {
  console.error('usage: node bench/profile.mjs FILE.cpuprofile [...] [--top N] [--json]');
  process.exit(1);
}

/** Where a frame's time goes, for the category table. */
function category({ functionName, url }) {
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(program)') return 'V8/native (program)';
  if (!url) {
    if (/^(parse)$/.test(functionName)) return 'JSON.parse';
    if (/^(stringify)$/.test(functionName)) return 'JSON.stringify';
    return `native: ${functionName || '(anonymous)'}`;
  }
  if (url.includes('/packages/operator/dist/')) return `nestor ${url.replace(/.*\/packages\/operator\/dist\//, '')}`;
  // @nestor/core: the transport, the HTTP/2 and HTTP/1.1 exchanges, JSON lines, protobuf.
  if (url.includes('/packages/core/dist/')) return `nestor core/${url.replace(/.*\/packages\/core\/dist\//, '')}`;
  if (url.includes('/node_modules/rxjs/')) return 'rxjs';
  if (url.includes('/node_modules/@kubernetes/client-node/')) return 'client-node';
  if (url.includes('/bench/')) return `bench ${basename(url)}`;
  if (/node:(_tls|tls|internal\/tls|crypto|internal\/crypto)/.test(url)) return 'node TLS/crypto';
  if (/node:(_http|http|https|internal\/http)/.test(url)) return 'node HTTP';
  if (/node:(internal\/streams|stream|internal\/webstreams)/.test(url)) return 'node streams';
  if (/node:(net|internal\/net|internal\/stream_base)/.test(url)) return 'node net';
  if (/node:(buffer|internal\/buffer|string_decoder)/.test(url)) return 'node buffer';
  if (/node:(events|internal\/events|internal\/event_target|internal\/abort)/.test(url)) return 'node events/abort';
  if (/node:internal\/(timers|process\/task_queues)|node:timers/.test(url)) return 'node timers/microtasks';
  if (url.startsWith('node:')) return `node ${url.slice(5).split('/').slice(0, 2).join('/')}`;
  return url.replace(/.*node_modules\//, '');
}

/** Coarser than category: whose code the time is spent in. */
function layer(cat) {
  if (cat.startsWith('nestor core/')) return 'Nestor core/ (transport, HTTP/2, JSON and protobuf decode)';
  if (cat.startsWith('nestor '))
    return `Nestor ${cat.slice(7).split('/')[0]}/ (${cat.includes('client/') ? 'transport, decode, KubeClient' : 'watch, informer, queue, pool, controller'})`;
  if (cat === 'rxjs') return 'rxjs';
  if (cat === 'client-node' || /^(undici|@kubernetes)/.test(cat)) return 'client-node + undici';
  if (cat === 'GC') return 'GC';
  if (cat === 'JSON.parse' || cat === 'JSON.stringify') return 'JSON (native)';
  if (
    /^node (HTTP|TLS|streams|net|buffer|events|timers)/.test(cat) ||
    /^native: (writev|writeLatin1String|writeUtf8String|writeBuffer|read|getPeerCertificate|init|start|connect|addCACert)$/.test(
      cat,
    )
  )
    return 'Node HTTP/TLS/socket stack (JS + native writes)';
  if (cat.startsWith('bench ')) return 'benchmark harness';
  return 'other (V8, runtime, misc)';
}

function summarize(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const totalUs = [...self.values()].reduce((a, b) => a + b, 0);
  const idleUs = [...self.entries()]
    .filter(([id]) => nodes.get(id).callFrame.functionName === '(idle)')
    .reduce((a, [, v]) => a + v, 0);
  let busyUs = totalUs - idleUs;

  const byCategory = new Map();
  const byFunction = new Map();
  const inclusive = new Map();
  const frameKey = (cf) =>
    `${cf.functionName || '(anonymous)'} ${cf.url.replace(/.*\/(node_modules|packages|bench)\//, '$1/')}:${cf.lineNumber + 1}`;
  const byLayer = new Map();
  let profilerUs = 0;
  for (const [id, us] of self) {
    const cf = nodes.get(id).callFrame;
    if (cf.functionName === '(idle)') continue;
    if (cf.url === 'node:inspector') {
      profilerUs += us; // the profiler's own work (starting, stopping): not the operator's
      continue;
    }
    const cat = category(cf);
    byLayer.set(layer(cat), (byLayer.get(layer(cat)) ?? 0) + us);
    byCategory.set(cat, (byCategory.get(cat) ?? 0) + us);
    const key = frameKey(cf);
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    // Inclusive time: every distinct Nestor frame on the stack gets the sample's time once.
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = nodes.get(at).callFrame;
      if (!frame.url.includes('/packages/operator/dist/')) continue;
      const k = frameKey(frame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + us);
    }
  }
  busyUs -= profilerUs;
  const top = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, ms: us / 1000, pctOfBusy: (100 * us) / busyUs }));
  const n = Number(values.top);
  return {
    file,
    wallMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    layers: top(byLayer, n),
    categories: top(byCategory, n),
    selfTime: top(byFunction, n),
    nestorInclusive: top(inclusive, n),
  };
}

for (const file of positionals) {
  const s = summarize(file);
  if (values.json) {
    console.log(JSON.stringify(s, null, 1));
    continue;
  }
  const rows = (list) =>
    list.map((r) => `  ${r.ms.toFixed(0).padStart(7)} ms ${r.pctOfBusy.toFixed(1).padStart(5)}%  ${r.name}`).join('\n');
  console.log(`\n== ${file}: ${s.busyMs.toFixed(0)} ms busy of ${s.wallMs.toFixed(0)} ms sampled`);
  console.log(`-- self time by layer\n${rows(s.layers)}`);
  console.log(`-- self time by category\n${rows(s.categories)}`);
  console.log(`-- self time by function\n${rows(s.selfTime)}`);
  console.log(`-- inclusive time of Nestor functions (% of busy)\n${rows(s.nestorInclusive)}`);
}
