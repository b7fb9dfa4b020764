import { type Clock, DEFAULT_SHUTDOWN_GRACE_MS, idleWithin, systemClock, type TimerHandle } from '@nestor/core';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';
import { DelayHeap } from './delay-heap.js';
import { Fifo } from './fifo.js';

/**
 * Where a queue reports what client-go's workqueue exports. Bound by the caller to one
 * queue (the queue does not pass its name), called synchronously on the hot path: keep
 * each call cheap.
 */
export interface QueueMetricsSink {
  /** A key entered the queue; dedup'd adds do not count (workqueue_adds_total). */
  add(): void;
  /** Of those, one at low priority: an echo of the controller's own write (nestor_workqueue_low_priority_adds_total). */
  lowPriorityAdd?(): void;
  /** Keys waiting to run, parked ones included (workqueue_depth). */
  depth(n: number): void;
  /** From a key's add to its get (workqueue_queue_duration_seconds). */
  queueLatency(seconds: number): void;
  /** From a key's get to its done (workqueue_work_duration_seconds). */
  workDuration(seconds: number): void;
  /** An addAfter or addRateLimited (workqueue_retries_total, counted as client-go does). */
  retry(): void;
}

export const noopQueueMetrics: QueueMetricsSink = {
  add: () => {},
  depth: () => {},
  queueLatency: () => {},
  workDuration: () => {},
  retry: () => {},
};

export interface WorkQueueOptions<K> {
  /** For logs and metrics labels. */
  name?: string;
  /** Backoff of addRateLimited (default: defaultControllerRateLimiter on the queue's clock). */
  rateLimiter?: RateLimiter<K>;
  clock?: Clock;
  metrics?: QueueMetricsSink;
  /**
   * Keys of one group never run at once: while one is processing, the others wait (an
   * object's reconcile and its timers are keys of the object's group). Default: each key
   * is its own group.
   */
  groupOf?: (key: K) => unknown;
  /**
   * Asked of a key about to run at normal priority: true moves it behind the others, as a
   * low-priority add (an echo the add could not tell: its watch event came before the
   * answer to the write that caused it). Each true must consume what it answered.
   */
  echo?: (key: K) => boolean;
}

/**
 * `'low'`: the add only echoes the controller's own write (its watch event), which needs a
 * run but rarely any work; it waits behind every key added at normal priority. A normal add
 * of a key waiting at low priority moves it up.
 */
export type QueuePriority = 'normal' | 'low';

/** Node clamps longer timers to 1 ms; a far delay is reached in several hops instead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * client-go's rate-limited delaying workqueue, made non-blocking for one event loop.
 *
 * A key is either queued (in the FIFO, dirty), processing (handed out by get(), until
 * done()), or both: an add while it runs parks it (dirty, not in the FIFO) and done()
 * queues it again. So one key never runs twice at once and no add is lost. Delayed adds
 * wait in a min-heap by ready time, one per key (the earliest wins), behind one timer.
 * Keys added at low priority wait in a second FIFO that get() reaches only when the first
 * is empty (an entry whose key moved up, or already ran, is skipped there).
 */
export class WorkQueue<K = string> {
  readonly name: string;
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter<K>;
  private readonly metrics: QueueMetricsSink;
  private readonly fifo = new Fifo<K>();
  private readonly lowFifo = new Fifo<K>();
  /** Keys waiting to run, with their add time (queue latency). */
  private readonly dirty = new Map<K, number>();
  /** The dirty keys that wait at low priority. */
  private readonly low = new Set<K>();
  /** Keys handed out by get(), with their start time (work duration). */
  private readonly processing = new Map<K, number>();
  private readonly delayed = new DelayHeap<K>();
  /** Keys the API server asked to leave alone until a time (Retry-After): not run before it, even when added. */
  private readonly notBefore = new Map<K, number>();
  private readonly groupOf?: (key: K) => unknown;
  private readonly echo?: (key: K) => boolean;
  /** Groups with a key processing (only with groupOf). */
  private readonly busyGroups = new Set<unknown>();
  /** Dirty keys held back because another key of their group is processing. */
  private readonly parked = new Map<unknown, K[]>();
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;
  /** Copied on (un)subscribe so a listener may unsubscribe while being called. */
  private listeners: readonly (() => void)[] = [];
  private readonly drainWaiters = new Set<() => void>();
  private shuttingDown = false;

  constructor(options: WorkQueueOptions<K> = {}) {
    this.name = options.name ?? '';
    this.clock = options.clock ?? systemClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
    this.metrics = options.metrics ?? noopQueueMetrics;
    if (options.groupOf) this.groupOf = options.groupOf;
    if (options.echo) this.echo = options.echo;
  }

  /**
   * Ready keys in the FIFOs (parked and delayed keys excluded), as client-go's Len(); a key
   * moved up from low priority counts twice until get() passes its old place.
   */
  get length(): number {
    return this.fifo.length + this.lowFifo.length;
  }

  get processingCount(): number {
    return this.processing.size;
  }

  get delayedCount(): number {
    return this.delayed.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Queues `key` unless it already waits (a normal add of a key waiting at low priority
   * moves it up); parks it until done() while it runs.
   */
  add(key: K, priority: QueuePriority = 'normal'): void {
    if (this.shuttingDown) return;
    if (this.dirty.has(key)) {
      // Moved up: a second place in the normal FIFO (get() skips the old one). One that runs
      // is queued by done(), at normal priority now.
      if (priority === 'normal' && this.low.delete(key) && !this.processing.has(key)) this.push(key);
      return;
    }
    if (this.notBefore.size > 0 && this.heldBack(key)) return;
    this.dirty.set(key, this.clock.now());
    if (priority === 'low') {
      this.low.add(key);
      this.metrics.lowPriorityAdd?.();
    } else this.low.delete(key);
    this.metrics.add();
    this.metrics.depth(this.dirty.size);
    if (this.processing.has(key)) return; // done() queues it again
    if (this.groupOf && this.busyGroups.has(this.groupOf(key))) this.park(key);
    else this.push(key);
  }

  /**
   * Adds `key` after `ms` (at once when `ms <= 0`). A key with a pending delayed add keeps
   * the earlier of the two ready times. Independent of whether the key is queued now: a
   * run asked for later still happens later, as in client-go.
   */
  addAfter(key: K, ms: number, { retry = true }: { retry?: boolean } = {}): void {
    if (this.shuttingDown) return;
    if (retry) this.metrics.retry();
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    if (this.delayed.schedule(key, this.clock.now() + ms)) this.arm();
  }

  /**
   * Adds `key` after its rate limiter's delay, or after `atLeastMs` when that is longer (the
   * wait the API server asked for): call it when a run of `key` failed.
   */
  addRateLimited(key: K, atLeastMs = 0): void {
    if (this.shuttingDown) return;
    // Asked by the server: a change of the object meanwhile does not run it sooner either.
    if (atLeastMs > 0) this.notBefore.set(key, this.clock.now() + atLeastMs);
    this.addAfter(key, Math.max(this.rateLimiter.when(key), atLeastMs));
  }

  /** Resets `key`'s backoff: call it when a run succeeded. Does not cancel a delayed add. */
  forget(key: K): void {
    this.rateLimiter.forget(key);
    this.notBefore.delete(key);
  }

  /** Failures of `key` since it was last forgotten. */
  numRequeues(key: K): number {
    return this.rateLimiter.retries(key);
  }

  /**
   * Hands out the next ready key and marks it processing, or undefined when none is ready
   * or the queue is shutting down (in-flight runs finish; queued keys are not started).
   * Every key returned must be given back with done().
   */
  get(): K | undefined {
    if (this.shuttingDown) return undefined;
    let key: K | undefined;
    while (key === undefined && this.fifo.length + this.lowFifo.length > 0) {
      const fromLow = this.fifo.length === 0;
      const next = (fromLow ? this.lowFifo : this.fifo).shift() as K;
      // The old place of a key that moved up, or of one that ran since: skipped.
      if (fromLow ? !this.low.has(next) : this.low.has(next)) continue;
      if (!this.dirty.has(next) || this.processing.has(next)) continue;
      if (!fromLow && this.echo?.(next)) {
        this.low.add(next);
        this.lowFifo.push(next);
        this.metrics.lowPriorityAdd?.();
        continue;
      }
      // Queued before another key of its group started: it waits for that one's done().
      if (this.groupOf && this.busyGroups.has(this.groupOf(next))) this.park(next);
      else key = next;
    }
    if (key === undefined) return undefined;
    this.low.delete(key);
    if (this.groupOf) this.busyGroups.add(this.groupOf(key));
    const now = this.clock.now();
    const addedAt = this.dirty.get(key) ?? now;
    this.dirty.delete(key);
    this.processing.set(key, now);
    this.metrics.depth(this.dirty.size);
    this.metrics.queueLatency((now - addedAt) / 1000);
    return key;
  }

  /** Ends the run of `key`; if it was added meanwhile, queues it again. */
  done(key: K): void {
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    this.metrics.workDuration((this.clock.now() - startedAt) / 1000);
    if (this.dirty.has(key)) {
      if (this.notBefore.size > 0 && this.heldBack(key)) {
        this.dirty.delete(key);
        this.low.delete(key);
        this.metrics.depth(this.dirty.size);
      } else this.push(key);
    }
    if (this.groupOf) {
      const group = this.groupOf(key);
      this.busyGroups.delete(group);
      const waiting = this.parked.get(group);
      if (waiting) {
        this.parked.delete(group);
        for (const other of waiting) this.push(other);
      }
    }
    if (this.processing.size === 0 && this.drainWaiters.size > 0) {
      for (const settle of this.drainWaiters) settle();
      this.drainWaiters.clear();
    }
  }

  /**
   * Calls `listener` synchronously, inside add()/done()/the delay timer, each time a key
   * becomes ready for get(). It must not throw and should defer real work (the worker
   * pool coalesces these into one microtask). Returns the unsubscribe function.
   */
  onReady(listener: () => void): () => void {
    const wrapped = () => listener(); // its own identity: subscribing one function twice unsubscribes once
    this.listeners = [...this.listeners, wrapped];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== wrapped);
    };
  }

  /** Stops intake (adds are ignored from now on) and drops the delayed adds. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.delayed.clear();
  }

  /** shutDown(), then resolves true once no key is processing, or false after `graceMs`. */
  shutDownWithDrain(graceMs = DEFAULT_SHUTDOWN_GRACE_MS): Promise<boolean> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve(true);
    return idleWithin(this.drainWaiters, this.clock, graceMs);
  }

  /** Seconds spent so far by the runs in progress (workqueue_unfinished_work_seconds). */
  unfinishedWorkSeconds(): number {
    const now = this.clock.now();
    let total = 0;
    for (const startedAt of this.processing.values()) total += now - startedAt;
    return total / 1000;
  }

  /** Age of the oldest run in progress (workqueue_longest_running_processor_seconds). */
  longestRunningProcessorSeconds(): number {
    const now = this.clock.now();
    let longest = 0;
    for (const startedAt of this.processing.values()) longest = Math.max(longest, now - startedAt);
    return longest / 1000;
  }

  /** True, with the add delayed until then, while `key` waits out what the server asked. */
  private heldBack(key: K): boolean {
    const due = this.notBefore.get(key);
    if (due === undefined) return false;
    if (due <= this.clock.now()) {
      this.notBefore.delete(key);
      return false;
    }
    if (this.delayed.schedule(key, due)) this.arm();
    return true;
  }

  private park(key: K): void {
    const group = this.groupOf!(key);
    const waiting = this.parked.get(group);
    if (waiting) waiting.push(key);
    else this.parked.set(group, [key]);
  }

  private push(key: K): void {
    (this.low.has(key) ? this.lowFifo : this.fifo).push(key);
    if (this.shuttingDown) return;
    for (const listener of this.listeners) listener();
  }

  /** Keeps the one timer no later than the earliest delayed add. */
  private arm(): void {
    const next = this.delayed.peek();
    if (!next || this.timerAt <= next.readyAt) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    const now = this.clock.now();
    const wait = Math.min(Math.max(0, next.readyAt - now), MAX_TIMER_MS);
    this.timerAt = now + wait;
    this.timer = this.clock.setTimeout(this.fireDue, wait);
  }

  private readonly fireDue = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    for (let next = this.delayed.peek(); next && next.readyAt <= now; next = this.delayed.peek()) {
      this.delayed.pop();
      this.add(next.key);
    }
    this.arm();
  };
}
