import type { Clock, TimerHandle } from './clock.js';

interface ManualTimer {
  at: number;
  seq: number;
  callback: () => void;
}

/**
 * A clock for tests: time moves only through advance(), which fires the timers that fall
 * due in time order (creation order on ties), with now() reading each timer's due time
 * while it runs. Timers set by a callback fire in the same advance() when they are due.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Map<number, ManualTimer>();

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { at: this.current + Math.max(0, ms), seq: id, callback });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Timers set and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer due by then. */
  advance(ms: number): void {
    const target = this.current + Math.max(0, ms);
    for (let next = this.nextDue(target); next; next = this.nextDue(target)) {
      this.timers.delete(next.seq);
      this.current = next.at;
      next.callback();
    }
    this.current = target;
  }

  /** A linear scan: tests hold a handful of timers. */
  private nextDue(target: number): ManualTimer | undefined {
    let next: ManualTimer | undefined;
    for (const timer of this.timers.values()) {
      if (timer.at <= target && (!next || timer.at < next.at || (timer.at === next.at && timer.seq < next.seq)))
        next = timer;
    }
    return next;
  }
}

/** mulberry32, a seeded PRNG for randomized tests: a failing seed replays the same run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
