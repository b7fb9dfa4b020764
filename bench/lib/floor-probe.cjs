// Loaded into the operator under bench/floor.mjs with --require (CommonJS: --import would
// start the ES module loader before the app does, ~3 MB on Node alone): on SIGUSR2 it collects
// garbage until the heap settles and writes the process's memory, by kind, to FLOOR_PROBE_OUT.
// With FLOOR_PROBE_MODULES=1 it also records which modules the process loads, with a loader
// hook. Its own cost, before the signal, is one listener (and the hook): node:v8 and node:vm
// load only when it is signalled, after bench/floor.mjs read RSS from outside.
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');

const out = process.env.FLOOR_PROBE_OUT;
const loaded = [];
if (process.env.FLOOR_PROBE_MODULES === '1') {
  const { registerHooks } = require('node:module');
  registerHooks({
    load(url, context, nextLoad) {
      loaded.push({ url, at: performance.now() });
      return nextLoad(url, context);
    },
  });
}

/** RssAnon and RssFile of /proc/self/status, in bytes. */
function procRss() {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rssAnon: field('RssAnon'), rssFile: field('RssFile') };
}

/** Resident bytes by mapping (/proc/self/smaps): the binary, its libraries, the anonymous rest. */
function mappings() {
  const byName = {};
  let name = '';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    // The binary by segment: its code (r-x) and its read-only data (r--, ICU's tables among it).
    if (header) name = `${header[2] || '[anonymous]'} ${header[1]}`;
    else if (line.startsWith('Rss:')) byName[name] = (byName[name] ?? 0) + Number(/(\d+)/.exec(line)[1]) * 1024;
  }
  return byName;
}

function snapshot(v8) {
  const heap = v8.getHeapStatistics();
  const spaces = Object.fromEntries(
    v8
      .getHeapSpaceStatistics()
      .map((s) => [s.space_name, { used: s.space_used_size, physical: s.physical_space_size }]),
  );
  return {
    ...process.memoryUsage(),
    ...procRss(),
    heap,
    spaces,
    code: v8.getHeapCodeStatistics(),
    mappings: mappings(),
  };
}

process.on('SIGUSR2', async () => {
  const v8 = require('node:v8');
  v8.setFlagsFromString('--expose-gc');
  const gc = require('node:vm').runInNewContext('gc');
  const before = snapshot(v8);
  for (let i = 0; i < 6; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const after = snapshot(v8);
  writeFileSync(out, JSON.stringify({ before, after, modules: loaded }));
});
