// Loaded into the operator under bench/floor.mjs with --import: records which modules the
// process loads, and on SIGUSR2 collects garbage until the heap settles and writes the
// process's memory, by kind, to FLOOR_PROBE_OUT. Its own cost is a hook and a listener
// (bench/floor.mjs measures RSS from outside before it signals).
import { readFileSync, writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

const out = process.env.FLOOR_PROBE_OUT;
const loaded = [];
registerHooks({
  load(url, context, nextLoad) {
    loaded.push({ url, at: performance.now() });
    return nextLoad(url, context);
  },
});

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

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

function snapshot() {
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
  const before = snapshot();
  for (let i = 0; i < 6; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const after = snapshot();
  writeFileSync(out, JSON.stringify({ before, after, modules: loaded }));
});
