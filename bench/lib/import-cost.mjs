// One import's cost, in a fresh process (bench/floor.mjs --imports runs it):
//   node --expose-gc [--max-semi-space-size=4] bench/lib/import-cost.mjs <specifier>[,<specifier>...] [<base>,...]
// With a base, those are imported first and the figures are what the specifiers add to them
// (node:tls beside node:http2, say, which share most of their code).
// Prints one JSON line: the growth of RSS (anonymous and file-backed), of the V8 heap by
// space, code and external memory, after the garbage settled before and after the import.
import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import v8 from 'node:v8';

const specifiers = process.argv[2] === 'none' ? [] : process.argv[2].split(',');
const base = process.argv[3] ? process.argv[3].split(',') : [];
let modules = 0;
registerHooks({
  load(url, context, nextLoad) {
    if (!url.startsWith('node:')) modules++;
    return nextLoad(url, context);
  },
});

async function settle() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function measure() {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1]) * 1024;
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]));
  const heap = v8.getHeapStatistics();
  return {
    rss: kb('VmRSS'),
    rssAnon: kb('RssAnon'),
    rssFile: kb('RssFile'),
    heapPhysical: heap.total_physical_size,
    heapUsed: heap.used_heap_size,
    oldSpace: spaces.old_space,
    codeSpace: spaces.code_space,
    largeObjects: spaces.large_object_space,
    bytecode: v8.getHeapCodeStatistics().bytecode_and_metadata_size,
    external: process.memoryUsage().external,
  };
}

for (const specifier of base) await import(specifier);
modules = 0; // those the specifiers add
await settle();
const before = measure();
for (const specifier of specifiers) await import(specifier);
await settle();
const after = measure();
const delta = Object.fromEntries(Object.keys(after).map((key) => [key, after[key] - before[key]]));
process.stdout.write(`${JSON.stringify({ specifiers, imported: base, base: before, delta, modules })}\n`);
