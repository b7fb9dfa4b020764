import { type Clock, DEFAULT_CONCURRENCY, DEFAULT_SHUTDOWN_GRACE_MS, idleWithin, systemClock } from '@nestor/core';
import { positiveInteger } from '../options-check.js';
import type { WorkQueue } from '../queue/queue.js';

/** A controller's seat at the pool: its queue, its own concurrency bound, its run function. */
export interface LaneOptions {
  name: string;
  queue: WorkQueue<string>;
  /** Runs of this lane at once (controller-runtime's MaxConcurrentReconciles). */
  maxConcurrent: number;
  /** Runs one key. Should never reject: a rejection goes to onError and the key is still done. */
  process(key: string): Promise<void>;
  /** Held with the other lanes of its group (one cluster's controllers), besides the whole pool. */
  group?: LaneGroup;
}

/**
 * Lanes held and let go together: the controllers of one cluster, held while its API server
 * does not answer, while the other clusters' lanes go on (WorkerPool.group()).
 */
export interface LaneGroup {
  readonly paused: boolean;
  /** Holds dispatch of the group's lanes: their runs in progress go on, their keys wait. */
  pause(): void;
  /** Dispatches them again. */
  resume(): void;
}

export interface PoolLane {
  readonly name: string;
  /** Runs of this lane in progress. */
  readonly inFlight: number;
  /** Stops dispatching this lane; its runs in progress finish. */
  unregister(): void;
}

export interface WorkerPoolOptions {
  /** Runs at once across all lanes (default 16). */
  concurrency?: number;
  /** Told when a lane's process() rejects (default: console.error). */
  onError?: (error: unknown, lane: string, key: string) => void;
  /** Times drain()'s grace period. */
  clock?: Clock;
}

class Lane implements PoolLane {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  readonly maxConcurrent: number;
  readonly process: (key: string) => Promise<void>;
  inFlight = 0;
  closed = false;
  readonly group: Group | undefined;
  /** In the pool's ready list: at most once, so waking it again costs nothing. */
  listed = false;
  nextReady: Lane | undefined;
  private readonly unsubscribe: () => void;

  constructor(options: LaneOptions, wake: (lane: Lane) => void) {
    this.name = options.name;
    this.queue = options.queue;
    this.maxConcurrent = options.maxConcurrent;
    this.process = options.process;
    this.group = options.group instanceof Group ? options.group : undefined;
    this.group?.lanes.add(this);
    this.unsubscribe = options.queue.onReady(() => wake(this));
  }

  get canTake(): boolean {
    return (
      !this.closed &&
      this.inFlight < this.maxConcurrent &&
      this.queue.length > 0 &&
      !this.queue.isShuttingDown &&
      !this.group?.paused
    );
  }

  unregister(): void {
    if (this.closed) return;
    this.closed = true;
    this.group?.lanes.delete(this);
    this.unsubscribe(); // a listed lane is dropped when the dispatcher reaches it
  }
}

class Group implements LaneGroup {
  paused = false;
  readonly lanes = new Set<Lane>();

  constructor(private readonly wake: (lane: Lane) => void) {}

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    for (const lane of this.lanes) this.wake(lane);
  }
}

/**
 * The manager's workers, shared by every controller. Each lane (controller) is listed
 * when it has a ready key and room under its own bound; the dispatcher serves the list
 * round-robin, one key per turn, so a controller with a deep backlog goes to the back
 * after each key and cannot starve the others. Dispatch runs on the queues' ready
 * signals and on completions, coalesced into one microtask: no polling.
 */
export class WorkerPool {
  readonly concurrency: number;
  private active = 0;
  private head: Lane | undefined;
  private tail: Lane | undefined;
  private scheduled = false;
  private draining = false;
  private paused = false;
  private readonly idleWaiters = new Set<() => void>();
  private readonly clock: Clock;
  private readonly onError: (error: unknown, lane: string, key: string) => void;

  constructor(options: WorkerPoolOptions = {}) {
    this.concurrency = positiveInteger(options.concurrency ?? DEFAULT_CONCURRENCY, 'WorkerPool concurrency');
    this.clock = options.clock ?? systemClock;
    this.onError = options.onError ?? reportToConsole;
  }

  /** Runs in progress across all lanes. */
  get activeWorkers(): number {
    return this.active;
  }

  register(options: LaneOptions): PoolLane {
    positiveInteger(options.maxConcurrent, `maxConcurrent of lane ${options.name}`);
    const lane = new Lane(options, this.wake);
    this.wake(lane); // its queue may hold keys already
    return lane;
  }

  /** A group of lanes held apart from the others (see LaneGroup); lanes join it at register(). */
  group(): LaneGroup {
    return new Group(this.wake);
  }

  /** Holds dispatch: runs in progress go on, queued keys wait (deduplicated) in their queues. */
  pause(): void {
    this.paused = true;
  }

  /** Dispatches again. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.schedule();
  }

  /**
   * Stops starting runs and resolves true once none is in progress, or false after
   * `graceMs`. Keys still queued stay in their queues.
   */
  drain(graceMs = DEFAULT_SHUTDOWN_GRACE_MS): Promise<boolean> {
    this.draining = true;
    if (this.active === 0) return Promise.resolve(true);
    return idleWithin(this.idleWaiters, this.clock, graceMs);
  }

  private readonly wake = (lane: Lane): void => {
    if (this.list(lane)) this.schedule();
  };

  /** Appends `lane` to the ready list when it can take a key and is not listed yet. */
  private list(lane: Lane): boolean {
    if (lane.listed || !lane.canTake) return false;
    lane.listed = true;
    if (this.tail) this.tail.nextReady = lane;
    else this.head = lane;
    this.tail = lane;
    return true;
  }

  private schedule(): void {
    if (this.scheduled || this.draining || this.paused || !this.head) return;
    this.scheduled = true;
    queueMicrotask(this.dispatch);
  }

  /** Fills free slots from the ready list. Wakes during it only list: this loop takes them. */
  private readonly dispatch = (): void => {
    while (this.active < this.concurrency && !this.draining && !this.paused && this.head) {
      const lane = this.head;
      this.head = lane.nextReady;
      if (!this.head) this.tail = undefined;
      lane.nextReady = undefined;
      lane.listed = false;
      if (!lane.canTake) continue; // closed, or emptied since it was listed
      const key = lane.queue.get();
      if (key === undefined) continue;
      this.active++;
      lane.inFlight++;
      void this.run(lane, key);
      this.list(lane); // to the back: round-robin
    }
    this.scheduled = false;
  };

  private async run(lane: Lane, key: string): Promise<void> {
    try {
      await lane.process(key);
    } catch (error) {
      try {
        this.onError(error, lane.name, key);
      } catch {
        // a failing error hook must not leave the key processing forever
      }
    }
    this.active--;
    lane.inFlight--;
    lane.queue.done(key);
    this.list(lane);
    if (this.active === 0 && this.idleWaiters.size > 0) {
      for (const settle of this.idleWaiters) settle();
      this.idleWaiters.clear();
    }
    this.schedule(); // a full pool left lanes listed: the slot just freed is theirs
  }
}

function reportToConsole(error: unknown, lane: string, key: string): void {
  console.error(`worker pool: process() of lane ${lane} rejected for key ${key}; the key is marked done`, error);
}
