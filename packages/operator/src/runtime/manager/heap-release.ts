// Gives the OS back what a busy spell grew, once the process is idle again (issue 45). V8
// keeps the pages an initial LIST, start-up or a burst of reconciles grew after their objects
// died, and its memory reducer did not return them in our runs: an operator owning 10,000
// ConfigMaps it never reads idled at 92-99 MB, at 81-86 MB after one full collection. Go's
// runtime returns such memory in the background (its scavenger); this is the same for V8, at
// the moments it costs nothing: every interval, when the process used almost no CPU since the
// last look and its RSS grew since the last release (any RSS for the first), one full
// collection that also shrinks the young generation and frees V8's pooled pages. It holds the
// event loop for its length (milliseconds for tens of MB of heap), which is why it waits for
// an idle spell. Needs `gc`, which `node --expose-gc` provides (the generated Deployment's
// NODE_OPTIONS has it); without it this does nothing.

import type { RuntimeLogger } from '@nestor/core';
import { numberInRange, positiveDuration } from '../options-check.js';

/** When an idle operator gives memory back to the OS (ManagerOptions.heapRelease). */
export interface HeapReleaseOptions {
  /** How often it looks (default 5 s). */
  intervalMs?: number;
  /** The most CPU, as a share of one core since the last look, of an idle process (default 0.02). */
  idleCpuShare?: number;
  /** RSS growth since the last release that warrants another (default 8 MiB). */
  minGrowthBytes?: number;
}

/** What a release reads and does, from the process by default (tests give their own). */
export interface HeapProbe {
  /** A full collection that returns what it can; undefined: no `--expose-gc`, no releases. */
  collect?: () => void;
  rssBytes(): number;
  cpuMicros(): number;
  nowMs(): number;
}

const DEFAULT_HEAP_RELEASE_INTERVAL_MS = 5_000;
const DEFAULT_IDLE_CPU_SHARE = 0.02;
const DEFAULT_MIN_GROWTH_BYTES = 8 * 2 ** 20;
const MB = 2 ** 20;

/**
 * The process itself: `gc` as `--expose-gc` defines it, in its last-resort flavor (V8's
 * CollectAllAvailableGarbage). Only that one shrinks the young generation back and frees
 * V8's pooled pages: an idle operator 81.4 -> 72.5 MB in 21 ms, where a regular full
 * collection gave back nothing (81.0 -> 81.1 MB, 10 ms).
 */
export function processHeapProbe(): HeapProbe {
  const gc = globalThis.gc;
  return {
    ...(typeof gc === 'function'
      ? { collect: () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' }) }
      : {}),
    rssBytes: () => process.memoryUsage.rss(),
    cpuMicros: () => {
      const { user, system } = process.cpuUsage();
      return user + system;
    },
    nowMs: () => performance.now(),
  };
}

export class HeapRelease {
  private readonly intervalMs: number;
  private readonly idleCpuShare: number;
  private readonly minGrowthBytes: number;
  private timer: NodeJS.Timeout | undefined;
  private lastCpu = 0;
  private lastAt = 0;
  /** RSS just after the last release; undefined before the first. */
  private baseline: number | undefined;

  constructor(
    options: HeapReleaseOptions = {},
    private readonly log?: RuntimeLogger,
    private readonly probe: HeapProbe = processHeapProbe(),
  ) {
    this.intervalMs = positiveDuration(
      options.intervalMs ?? DEFAULT_HEAP_RELEASE_INTERVAL_MS,
      'heapRelease.intervalMs',
    );
    this.idleCpuShare = numberInRange(options.idleCpuShare ?? DEFAULT_IDLE_CPU_SHARE, 0, 1, 'heapRelease.idleCpuShare');
    this.minGrowthBytes = numberInRange(
      options.minGrowthBytes ?? DEFAULT_MIN_GROWTH_BYTES,
      0,
      Number.MAX_SAFE_INTEGER,
      'heapRelease.minGrowthBytes',
    );
  }

  /** Starts looking every interval; false (and nothing started) without a way to collect. */
  start(): boolean {
    if (this.timer) return true;
    if (!this.probe.collect) {
      this.log?.debug(
        'idle memory is not given back: node runs without --expose-gc (the generated Deployment sets it)',
      );
      return false;
    }
    this.lastCpu = this.probe.cpuMicros();
    this.lastAt = this.probe.nowMs();
    // unref: an idle operator's process ends when everything else has.
    this.timer = setInterval(() => this.look(), this.intervalMs).unref();
    return true;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look: releases when the process was idle since the last and its RSS grew enough. */
  look(): boolean {
    const collect = this.probe.collect;
    if (!collect) return false;
    const cpu = this.probe.cpuMicros();
    const at = this.probe.nowMs();
    const busy = (cpu - this.lastCpu) / 1000 > this.idleCpuShare * (at - this.lastAt);
    this.lastCpu = cpu;
    this.lastAt = at;
    if (busy) return false;
    const before = this.probe.rssBytes();
    if (this.baseline !== undefined && before - this.baseline < this.minGrowthBytes) return false;
    collect();
    const after = this.probe.rssBytes();
    // The next look judges its own spell, not the collection's CPU.
    this.lastCpu = this.probe.cpuMicros();
    this.lastAt = this.probe.nowMs();
    this.baseline = after;
    this.log?.debug(
      `idle: released memory, RSS ${(before / MB).toFixed(1)} -> ${(after / MB).toFixed(1)} MB in ${(this.lastAt - at).toFixed(0)} ms`,
    );
    return true;
  }
}
