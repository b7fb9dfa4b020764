import { silentLogger, type KubeObject, type RuntimeLogger } from '@nestor/core';
import type { KubeClient } from '../../client/kube-client.js';
import { ControllerRuns } from './controller-runs.js';
import { isFenced } from './fenced-run.js';
import type { WorkQueue } from '../queue/queue.js';
import type { ReconcileRequest } from './reconciler.js';
import { positiveDuration } from '../options-check.js';
import { toError } from './result.js';

/**
 * A periodic action on each object of a controller's kind, as kopf's `@timer`: it starts
 * when the object appears in the cache, runs every `intervalMs` while the object exists,
 * and stops when the object is deleted or its deletion starts. It goes through the
 * controller's work queue as a key of the object's group, so it never runs at the same
 * time as the object's reconcile (nor as its other timers).
 */
export interface ObjectTimer<T> {
  /** Names the timer in logs. */
  name: string;
  /** From the end of one run to the start of the next. */
  intervalMs: number;
  /** From the object's appearance to the first run (default: intervalMs). */
  initialDelayMs?: number;
  /** The object as cached; `signal` aborts on the reconcile timeout and on shutdown. */
  run(request: ReconcileRequest<T>): Promise<void> | void;
}

/** Separates an object's key from its timer's index in a queue item. Never in a key. */
const MARK = '\u0000';

/** The queue group of an item: the object's key, for its reconciles and its timers alike. */
export function objectGroupOf(item: string): string {
  const at = item.indexOf(MARK);
  return at < 0 ? item : item.slice(0, at);
}

/** Whether a queue item is a timer run rather than a reconcile. */
export function isTimerItem(item: string): boolean {
  return item.includes(MARK);
}

export interface ObjectTimersOptions<T> {
  controller: string;
  timers: readonly ObjectTimer<T>[];
  queue: WorkQueue<string>;
  /** The cached object of a key; null or undefined when it is gone. */
  read(key: string): T | undefined | null;
  /** True while the object's timed-out reconcile has not returned: its timers wait. */
  held(key: string): boolean;
  /** Abort a run after this long (the controller's reconcile timeout). */
  timeoutMs?: number;
  /** Scoped to the controller and each run's signal: the run's `request.client`. */
  client: KubeClient;
  /** The cluster `client` reads and writes (default 'default'). */
  cluster?: string;
  log?: RuntimeLogger;
}

/** The timers of one controller's objects: scheduled on the queue, run by the worker pool. */
export class ObjectTimers<T extends KubeObject> {
  private readonly runs: ControllerRuns;

  constructor(private readonly options: ObjectTimersOptions<T>) {
    this.runs = new ControllerRuns({
      controller: options.controller,
      client: options.client,
      log: options.log ?? silentLogger,
      ...(options.cluster ? { cluster: options.cluster } : {}),
    });
    options.timers.forEach((timer) => {
      const where = `controller ${options.controller}: timer ${timer.name}`;
      positiveDuration(timer.intervalMs, `${where}: intervalMs`);
      if (timer.initialDelayMs !== undefined && timer.initialDelayMs !== 0) {
        positiveDuration(timer.initialDelayMs, `${where}: initialDelayMs`);
      }
    });
  }

  /** An object appeared: its timers start. A timer already scheduled keeps its time. */
  start(key: string): void {
    this.options.timers.forEach((timer, index) => {
      this.options.queue.addAfter(`${key}${MARK}${index}`, timer.initialDelayMs ?? timer.intervalMs, { retry: false });
    });
  }

  /** One timer run, handed out by the queue. Never rejects. */
  async process(item: string): Promise<void> {
    const at = item.indexOf(MARK);
    const key = item.slice(0, at);
    const timer = this.options.timers[Number(item.slice(at + 1))];
    if (!timer) return;
    const object = this.options.read(key);
    // Gone, or being deleted: the timer stops (a new object of that name starts it again).
    if (!object || object.metadata?.deletionTimestamp) return;
    if (this.options.held(key)) {
      this.again(item, timer);
      return;
    }
    const run = this.runs.start(key, object, 1, (request) => timer.run(request), { timer: timer.name });
    const timeoutMs = this.options.timeoutMs;
    const timeout = timeoutMs
      ? setTimeout(() => run.abort.abort(new Error(`timer ${timer.name} ran longer than ${timeoutMs} ms`)), timeoutMs)
      : undefined;
    try {
      // A run that ignores its aborted signal keeps its worker and its object until it returns:
      // the queue hands out no other key of the object meanwhile.
      await run.result;
    } catch (thrown) {
      const error = toError(thrown);
      const { log, signal } = run.request;
      if (isFenced(error, signal)) {
        log.debug(
          `timer ${timer.name} stopped by the write fence; this replica no longer holds the Lease: ${error.message}`,
        );
      } else {
        log.error(`timer ${timer.name} failed; it runs again in ${timer.intervalMs} ms: ${error.message}`, {
          error: error.message,
          ...(error.stack ? { stack: error.stack } : {}),
        });
      }
    } finally {
      clearTimeout(timeout);
      run.end();
    }
    this.again(item, timer);
  }

  /** Aborts every running timer's signal. */
  abortAll(reason: Error): void {
    this.runs.abortAll(reason);
  }

  /** Resolves once every run started so far has returned. */
  settled(): Promise<void> {
    return this.runs.settled();
  }

  private again(item: string, timer: ObjectTimer<T>): void {
    if (!this.options.queue.isShuttingDown) this.options.queue.addAfter(item, timer.intervalMs, { retry: false });
  }
}
