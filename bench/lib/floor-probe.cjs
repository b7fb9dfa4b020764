// Loaded into the operator under bench/floor.mjs with --require (CommonJS: --import would
// start the ES module loader before the app does, ~3 MB on Node alone): on SIGWINCH it
// collects garbage until the heap settles and writes the process's memory, by kind, to
// FLOOR_PROBE_OUT. SIGWINCH, not SIGUSR2: Nest's enableShutdownHooks() stops the app on
// SIGUSR2, and a process ignores SIGWINCH by default.
// With FLOOR_PROBE_MODULES=1 it also records which modules the process loads, with a loader
// hook. Its own cost, before the signal, is one listener (and the hook): node:v8 and node:vm
// load only when it is signalled, after bench/floor.mjs read RSS from outside.
'use strict';
const { readFileSync, writeFileSync } = process.getBuiltinModule('node:fs');

const out = process.env.FLOOR_PROBE_OUT;
const loaded = [];
if (process.env.FLOOR_PROBE_MODULES === '1') {
  const { registerHooks } = process.getBuiltinModule('node:module');
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

process.on('SIGWINCH', async () => {
  const v8 = process.getBuiltinModule('node:v8');
  v8.setFlagsFromString('--expose-gc');
  const gc = process.getBuiltinModule('node:vm').runInNewContext('gc');
  const before = snapshot(v8);
  for (let i = 0; i < 6; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const after = snapshot(v8);
  // With FLOOR_PROBE_SNAPSHOT=<file>, a heap snapshot too, to see what the heap holds.
  if (process.env.FLOOR_PROBE_SNAPSHOT) v8.writeHeapSnapshot(process.env.FLOOR_PROBE_SNAPSHOT);
  writeFileSync(out, JSON.stringify({ before, after, modules: loaded }));
});
