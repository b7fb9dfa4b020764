#!/usr/bin/env node
// A JSON LIST body decoded whole (the chunks joined, one string, JSON.parse: how a page was
// read before) against item by item as the chunks come (JsonListDecoder). Offline: a list
// of N custom resources shaped as the API server writes a Widget (~1.3 KiB each), cut in
// 16 KiB chunks (a TLS record's worth, what a socket hands over). Each way runs in a child
// process of its own, alternating, `rounds` times: CPU ms, and the peak of RSS and of the
// V8 heap while decoding (sampled after every chunk), above the process holding the chunks.
//   npm run build && node bench/micro/json-list-decode.mjs [objects=100000] [rounds=3]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median } from '../lib/common.mjs';

const here = fileURLToPath(import.meta.url);
const MB = (b) => b / 2 ** 20;

if (process.argv[2] === '--child') await child(process.argv[3], Number(process.argv[4]));
else main();

function main() {
  const count = Number(process.argv[2] ?? 100_000);
  const rounds = Number(process.argv[3] ?? 3);
  const ways = ['whole', 'streamed'];
  const runs = Object.fromEntries(ways.map((w) => [w, []]));
  for (let round = 0; round < rounds; round++) {
    for (const way of round % 2 ? [...ways].reverse() : ways) {
      const run = spawnSync(
        process.execPath,
        ['--expose-gc', '--max-semi-space-size=4', here, '--child', way, String(count)],
        {
          encoding: 'utf8',
        },
      );
      if (run.status !== 0) throw new Error(`${way}: ${run.stderr}`);
      runs[way].push(JSON.parse(run.stdout));
    }
  }
  console.log(`${count} objects, ${runs.whole[0].bodyMB.toFixed(1)} MB of JSON, medians of ${rounds}:`);
  console.log('| way | CPU ms | peak RSS above the start, MB | peak V8 heap above the start, MB |');
  console.log('|---|---:|---:|---:|');
  for (const way of ways) {
    const m = (k) => median(runs[way].map((r) => r[k]));
    console.log(`| ${way} | ${m('cpuMs').toFixed(0)} | ${m('rssMB').toFixed(1)} | ${m('heapMB').toFixed(1)} |`);
  }
}

/** One way in a fresh process: the body made and cut first, then measured while decoded. */
async function child(way, count) {
  const { JsonListDecoder } = await import('@nestor/core');
  const payload = 'x'.repeat(860);
  const item = (i) => ({
    apiVersion: 'bench.nestor.dev/v1',
    kind: 'Widget',
    metadata: {
      creationTimestamp: '2026-11-27T08:00:00Z',
      generation: 1,
      name: `widget-${i}`,
      namespace: 'bench-sync',
      resourceVersion: String(100000 + i),
      uid: `6f1c2a9e-0b7d-4c3e-9a51-${String(i).padStart(12, '0')}`,
      labels: { app: 'bench' },
    },
    spec: { payload, size: i % 7 },
  });
  // The chunks are made straight from the items, as a socket would hand them over: the
  // body never exists whole in this process before it is decoded.
  const { chunks, bodyMB } = chunked([
    '{"apiVersion":"bench.nestor.dev/v1","items":[',
    ...Array.from({ length: count }, (_, i) => (i ? ',' : '') + JSON.stringify(item(i))),
    '],"kind":"WidgetList","metadata":{"resourceVersion":"200000"}}',
  ]);
  globalThis.gc?.();
  const start = process.memoryUsage();
  let peakRss = start.rss;
  let peakHeap = start.heapUsed;
  const sample = () => {
    const m = process.memoryUsage();
    if (m.rss > peakRss) peakRss = m.rss;
    if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
  };
  const cpu = process.cpuUsage();
  let items;
  if (way === 'whole') {
    const held = [];
    for (const chunk of chunks) {
      held.push(chunk);
      sample();
    }
    const joined = Buffer.concat(held);
    sample();
    items = JSON.parse(joined.toString('utf8')).items;
    sample();
  } else {
    const decoder = new JsonListDecoder();
    items = [];
    for (const chunk of chunks) {
      for (const item of decoder.write(chunk)) items.push(item);
      sample();
    }
    decoder.end();
  }
  const used = process.cpuUsage(cpu);
  sample();
  if (items.length !== count) throw new Error(`${way}: ${items.length} items`);
  process.stdout.write(
    JSON.stringify({
      bodyMB,
      cpuMs: (used.user + used.system) / 1000,
      rssMB: MB(peakRss - start.rss),
      heapMB: MB(peakHeap - start.heapUsed),
    }),
  );
}

/** The strings' bytes in 16 KiB chunks. */
function chunked(strings) {
  const chunks = [];
  let bytes = 0;
  let pending = [];
  let pendingBytes = 0;
  for (const text of strings) {
    const piece = Buffer.from(text);
    bytes += piece.length;
    pending.push(piece);
    pendingBytes += piece.length;
    while (pendingBytes >= 16_384) {
      const joined = Buffer.concat(pending);
      chunks.push(Buffer.from(joined.subarray(0, 16_384)));
      pending = [joined.subarray(16_384)];
      pendingBytes = joined.length - 16_384;
    }
  }
  if (pendingBytes) chunks.push(Buffer.concat(pending));
  return { chunks, bodyMB: MB(bytes) };
}
