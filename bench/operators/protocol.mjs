// The operator side of the line protocol between bench/run.mjs and an operator under test
// (the Go peer, bench/controller-runtime/main.go, speaks the same). One JSON object a line:
//   parent -> child (stdin):  {cmd: 'start'} (sync mode) | {cmd: 'expect', n} | {cmd: 'mark'}
//                             | {cmd: 'stats', gc?, lite?} | {cmd: 'exit'} | {cmd: 'obj', ...} (baseline only)
//   child -> parent (stdout): {ev: 'hello'} | {ev: 'synced', ...} | {ev: 'ready', startupMs (since process start)} | {ev: 'all', at}
//                             | {ev: 'marked', cpuUs} | {ev: 'stats', cpuUs, rss, maxRss, heap, reconciles, inFlight, latUs}
// Nothing else may write to stdout.
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { nowUs } from '../lib/common.mjs';

export function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

export function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('-')) out[argv[i].replace(/^-+/, '')] = argv[++i];
  }
  return { ...out, workers: Number(out.workers ?? 8) };
}

export function cpuUs() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

export function memory(gc = false) {
  if (gc && globalThis.gc) {
    globalThis.gc();
    globalThis.gc();
  }
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heap: heapUsed, external, rss, maxRss: process.resourceUsage().maxRSS * 1024 };
}

/**
 * A V8 CPU profile of the measured window only (`--profile FILE`): started by 'mark' (or
 * 'start' in sync mode), written on 'exit'. Start-up and module loading stay out of it.
 */
export const profiler = {
  session: undefined,
  async start() {
    const file = args().profile;
    if (!file || this.session) return;
    // Loaded only when asked for: an operator that is not profiled should not load the inspector.
    const { Session } = await import('node:inspector/promises');
    this.session = new Session();
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: 500 });
    await this.session.post('Profiler.start');
  },
  async stop() {
    if (!this.session) return;
    const { profile } = await this.session.post('Profiler.stop');
    writeFileSync(args().profile, JSON.stringify(profile));
    this.session.disconnect();
    this.session = undefined;
  },
};

/** Reads commands from stdin; 'exit' (or stdin closing: the parent died) ends the process. */
export function onCommands(handler) {
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    const command = JSON.parse(line);
    if (command.cmd === 'exit') {
      profiler.stop().finally(() => process.exit(0));
      return;
    }
    Promise.resolve(handler(command)).catch((error) => fail(error));
  });
  lines.on('close', () => process.exit(0));
}

/**
 * Sync mode: 'start' runs `sync()` (start an informer and wait until it has synced), timed,
 * with its CPU and memory before and after (two forced GCs each), then sends what the
 * `report()` it returns gives (at least `objects`), read after the measurement; 'stats'
 * sends memory and CPU.
 */
export function onSyncCommands(sync) {
  onCommands(async (command) => {
    if (command.cmd === 'start') {
      const before = memory(true);
      await profiler.start();
      const cpuBefore = cpuUs();
      const started = nowUs();
      const report = await sync();
      const synced = nowUs();
      const cpuAfter = cpuUs();
      const after = memory(true);
      send({ ev: 'synced', ...report(), syncUs: synced - started, cpuUs: cpuAfter - cpuBefore, before, after });
    } else if (command.cmd === 'stats') {
      send({ ev: 'stats', ...memory(command.gc), cpuUs: cpuUs(), at: nowUs() });
    }
  });
}

export function fail(error) {
  send({ ev: 'error', message: error?.stack ?? String(error) });
  process.exit(1);
}

/**
 * Counts reconciles and the latency from the load generator's write (the timestamp it put
 * in the object) to the start of the reconcile that first sees it.
 */
export class Recorder {
  reconciles = 0;
  inFlight = 0;
  latencies = [];
  lastSeen = new Map();
  done = new Set();
  expected = 0;
  announced = false;

  start(key, writtenAt, at = nowUs()) {
    this.inFlight++;
    if (writtenAt && this.lastSeen.get(key) !== writtenAt) {
      this.lastSeen.set(key, writtenAt);
      this.latencies.push(at - Number(writtenAt));
    }
  }

  finish(key, ok) {
    this.inFlight--;
    if (!ok) return;
    this.reconciles++;
    this.done.add(key);
    this.checkAll();
  }

  checkAll() {
    if (this.expected > 0 && !this.announced && this.done.size >= this.expected) {
      this.announced = true;
      send({ ev: 'all', at: nowUs(), reconciles: this.reconciles });
    }
  }

  /** Handles expect / mark / stats; returns false for anything else. */
  command(command) {
    switch (command.cmd) {
      case 'expect':
        this.expected = command.n;
        this.announced = false;
        this.checkAll();
        return true;
      case 'mark':
        void profiler.start();
        this.reconciles = 0;
        this.latencies = [];
        this.done = new Set();
        this.expected = 0;
        send({ ev: 'marked', cpuUs: cpuUs(), at: nowUs() });
        return true;
      case 'stats':
        send({
          ev: 'stats',
          ...memory(command.gc),
          cpuUs: cpuUs(),
          at: nowUs(),
          reconciles: this.reconciles,
          inFlight: this.inFlight,
          ...(command.lite ? {} : { latUs: this.latencies }),
        });
        return true;
      default:
        return false;
    }
  }
}
