import { isUnreachable, retryAfterMs, type KubeObject, type RuntimeLogger } from '@nestor/core';
import type { EventRecorder } from '../../client/event-recorder.js';
import type { KubeClient } from '../../client/kube-client.js';
import { ControllerRuns } from './controller-runs.js';
import { isFenced } from './fenced-run.js';
import type { QueueMetricsSink, WorkQueue } from '../queue/queue.js';
import type { Reconciler } from './reconciler.js';
import { show } from '../options-check.js';
import { endReconcileSpan, inReconcileSpan, startReconcileSpan } from './reconcile-span.js';
import type { CatchUp } from './event-versions.js';
import { isTerminal, ReconcileTimeoutError, toError, type ReconcileResult } from './result.js';

/**
 * How a reconcile ended, for metrics and hooks: controller-runtime's result label, and
 * 'fenced': a write refused by the fence (LeaseLostError), the key left to the replica that
 * holds the Lease.
 */
export type ReconcileOutcome =
  'success' | 'requeue' | 'requeue_after' | 'error' | 'terminal_error' | 'timeout' | 'fenced';

/** Metrics the controller reports; the Nest layer binds them to Prometheus. */
export interface ControllerMetricsSink {
  /** One finished reconcile; `error` is what it threw, if anything. Never 'fenced': see fenced(). */
  reconciled(outcome: Exclude<ReconcileOutcome, 'fenced'>, seconds: number, error?: Error): void;
  /** A reconcile stopped by the write fence (this replica lost its Lease): not an error, not retried. */
  fenced?(seconds: number): void;
  activeWorkers(delta: 1 | -1): void;
  /** An event skipped or a source resubscribed (see StreamFault). */
  streamFault?(stream: string, kind: string): void;
  /** An object failed maxRetries times in a row and is not retried until it changes. */
  retriesExhausted?(): void;
  queue?: QueueMetricsSink;
}

export interface ReconcileLoopOptions<T> {
  /** The controller's name, in every log line. */
  name: string;
  /** The controller's primary kind, in each reconcile's span. */
  kind?: string;
  queue: WorkQueue<string>;
  reconcile: Reconciler<T>;
  /**
   * The object a key stands for: the cached object, `undefined` when the kind has no
   * object (source-fed controllers), or `null` when it is gone (nothing to converge).
   */
  read(key: string): T | undefined | null;
  /**
   * Before the run: a wait for the informers that may serve its reads to reach the events
   * that queued the key and the version of `object`, what `read` gave the run (null: deleted,
   * nothing to wait for) (see EventVersions); undefined when none is behind.
   */
  catchUp?(key: string, signal: AbortSignal, object: T | undefined | null): Promise<CatchUp> | undefined;
  /** Abort a reconcile after this long and retry it with backoff. */
  timeoutMs?: number;
  /**
   * Present when something holds dispatch while the API server is unreachable (the
   * manager's OutageGate): a reconcile that failed for want of a response is then queued
   * again without spending its backoff, to run when the server answers.
   */
  outageHold?: boolean;
  /**
   * Give up on an object after this many failed runs in a row (kooper's max retries): the
   * queue forgets it, without a backoff requeue, until something adds it again (its next
   * watch event). Unset: retry with backoff for ever, as controller-runtime.
   */
  maxRetries?: number;
  /** Where the Warning Event of an object given up on goes. */
  events?: Pick<EventRecorder, 'record'>;
  /** Scoped to this controller and each run's signal: the run's `request.client` (the manager passes its own). */
  client: KubeClient;
  /** The cluster `client` reads and writes, named in each request (default 'default'). */
  cluster?: string;
  log: RuntimeLogger;
  metrics?: ControllerMetricsSink;
}

/** The reason of the Warning Event recorded when a controller gives up on an object. */
export const RETRIES_EXHAUSTED_REASON = 'RetriesExhausted';

/**
 * One run per key, each turned into a queue decision: done, requeue after a delay, retry
 * with backoff, or stop retrying (terminal). Runs are abortable, and a run that ignores its
 * aborted signal holds its key until it settles, so two runs of one object never overlap.
 */
export class ReconcileLoop<T> {
  /** Keys whose timed-out run has not settled yet: not run again until it does. */
  private readonly hung = new Map<string, { rerun: boolean }>();
  /**
   * Keys whose run the fence stopped: out of the queue, left to the replica that holds the
   * Lease, and added back only if this replica writes again (resume()), as it may be the one.
   */
  private readonly fencedKeys = new Set<string>();
  /** Every run, timed-out ones included until they settle: shutdown aborts them and waits for them. */
  private readonly runs: ControllerRuns;
  /** Cuts the waits for the caches before runs (abortAll): a stand-by or a stop. */
  private waits = new AbortController();

  constructor(private readonly options: ReconcileLoopOptions<T>) {
    this.runs = new ControllerRuns({
      controller: options.name,
      client: options.client,
      log: options.log,
      ...(options.cluster ? { cluster: options.cluster } : {}),
    });
  }

  /** Reconciles running now. */
  get inFlight(): number {
    return this.runs.inFlight;
  }

  /** Aborts every running reconcile's signal. */
  abortAll(reason: Error): void {
    this.runs.abortAll(reason);
    this.waits.abort(reason);
    this.waits = new AbortController();
  }

  /** True while `key`'s timed-out run has not returned: nothing else may run for the object. */
  holds(key: string): boolean {
    return this.hung.has(key);
  }

  /** Runs not settled yet, those that timed out and ignored their signal included. */
  get unsettledRuns(): number {
    return this.runs.unsettledRuns;
  }

  /**
   * This replica writes again (it won the Lease back): the keys the fence stopped are queued
   * once more, without backoff, since no other replica may have reconciled them meanwhile.
   */
  resume(): void {
    for (const key of this.fencedKeys) this.options.queue.add(key);
    this.fencedKeys.clear();
  }

  /** Resolves once every run started so far has settled (returned or thrown). */
  settled(): Promise<void> {
    return this.runs.settled();
  }

  /** One run for one key. Never rejects: every outcome is turned into a queue decision. */
  async process(key: string): Promise<void> {
    const { queue, metrics, name, reconcile } = this.options;
    this.fencedKeys.delete(key); // queued again (an event): an ordinary run from here
    const hung = this.hung.get(key);
    if (hung) {
      hung.rerun = true; // its timed-out run still holds the key; run again when it settles
      return;
    }
    // The object is read before the wait for the caches, and the wait covers its version:
    // read after, it could be newer than what was waited for (an event during the wait).
    const object = this.options.read(key);
    const waiting = this.options.catchUp?.(key, this.waits.signal, object);
    if (waiting && !(await this.caughtUp(key, waiting))) return;
    if (object === null || (waiting && this.options.read(key) === null)) {
      // Deleted before we got to it: nothing to converge (a finalizer handles deletions).
      queue.forget(key);
      return;
    }
    const attempt = queue.numRequeues(key) + 1;
    const started = performance.now();
    metrics?.activeWorkers(1);
    let outcome: ReconcileOutcome;
    let result: ReconcileResult | undefined;
    let failure: Error | undefined;
    let requeued: boolean;
    let span: ReturnType<typeof startReconcileSpan> = undefined;
    const run = this.runs.start(key, object, attempt, (request) => {
      span = startReconcileSpan({
        controller: name,
        kind: this.options.kind,
        ref: request.ref,
        reconcileId: request.reconcileId,
        attempt,
        cluster: request.cluster,
      });
      return inReconcileSpan(span, () => reconcile(request));
    });
    const { log, signal } = run.request;
    try {
      result = checkResult(await this.withTimeout(run.result, run.abort), name);
      outcome = this.settle(key, result);
      requeued = outcome !== 'success';
    } catch (thrown) {
      failure = toError(thrown);
      if (isFenced(failure, signal)) {
        outcome = this.fenced(key, failure, log);
        requeued = false;
      } else {
        [outcome, requeued] = this.fail(key, failure, log, attempt, object);
        if (failure instanceof ReconcileTimeoutError) this.holdUntilSettled(key, run.result);
      }
    } finally {
      run.end();
      metrics?.activeWorkers(-1);
    }
    const seconds = (performance.now() - started) / 1000;
    if (outcome === 'fenced') metrics?.fenced?.(seconds);
    else metrics?.reconciled(outcome, seconds, failure);
    // A fenced run is no error of the object: its span is not marked as one.
    if (span) endReconcileSpan(span, outcome, result, outcome === 'fenced' ? undefined : failure, requeued);
  }

  /**
   * The wait for the caches before a run; false when the key is queued again instead: cut by
   * a stand-by or a stop (not the object's fault: no backoff), or past its bound (backoff).
   */
  private async caughtUp(key: string, waiting: Promise<CatchUp>): Promise<boolean> {
    const result = await waiting;
    if (result.outcome === 'reached') return true;
    const { queue, log, name } = this.options;
    if (result.outcome === 'aborted') {
      queue.add(key);
      return false;
    }
    queue.addRateLimited(key);
    log.warn(`controller ${name}: ${key} not reconciled yet: ${result.behind}; retrying with backoff`, {
      key,
    });
    return false;
  }

  /**
   * The fence refused a write: this replica no longer leads (or owns the object's shard).
   * Nothing is wrong with the object, so no error, no backoff, no retry counted: the key is
   * forgotten here and left to the replica that holds the Lease.
   */
  private fenced(key: string, error: Error, log: RuntimeLogger): ReconcileOutcome {
    this.options.queue.forget(key);
    this.fencedKeys.add(key);
    log.debug(`reconcile stopped by the write fence; left to the replica that holds the Lease: ${error.message}`);
    return 'fenced';
  }

  private withTimeout<R>(run: Promise<R>, abort: AbortController): Promise<R> {
    const timeoutMs = this.options.timeoutMs;
    if (!timeoutMs) return run;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new ReconcileTimeoutError(timeoutMs);
        abort.abort(error);
        reject(error);
      }, timeoutMs);
    });
    return Promise.race([run, timeout]).finally(() => clearTimeout(timer));
  }

  /**
   * A reconcile that ignored its aborted signal keeps running in the background. Its
   * worker is freed, but the key is not run again until that run settles.
   */
  private holdUntilSettled(key: string, run: Promise<unknown>): void {
    const { queue } = this.options;
    const entry = { rerun: false };
    this.hung.set(key, entry);
    const release = () => {
      this.hung.delete(key);
      if (entry.rerun && !queue.isShuttingDown) queue.addRateLimited(key);
    };
    run.then(release, release);
  }

  private settle(key: string, result: ReconcileResult | undefined): ReconcileOutcome {
    const { queue } = this.options;
    if (result?.requeueAfter !== undefined && result.requeueAfter > 0) {
      queue.forget(key);
      queue.addAfter(key, result.requeueAfter);
      return 'requeue_after';
    }
    if (result?.requeue) {
      queue.addRateLimited(key);
      return 'requeue';
    }
    queue.forget(key);
    return 'success';
  }

  private fail(
    key: string,
    error: Error,
    log: RuntimeLogger,
    attempt: number,
    object: T | undefined,
  ): [outcome: ReconcileOutcome, requeued: boolean] {
    const { queue, maxRetries } = this.options;
    if (isTerminal(error)) {
      queue.forget(key);
      log.error(`reconcile failed with a terminal error; not retrying until the object changes: ${error.message}`, {
        error: error.message,
      });
      return ['terminal_error', false];
    }
    if (this.options.outageHold && isUnreachable(error)) {
      queue.add(key); // not the object's fault: no backoff; it runs when dispatch resumes
      log.debug(`reconcile failed: the API server did not answer; it runs again once it does: ${error.message}`);
      return ['error', true];
    }
    const timeout = error instanceof ReconcileTimeoutError;
    if (maxRetries !== undefined && attempt >= maxRetries) {
      this.giveUp(key, error, log, attempt, object);
      return [timeout ? 'timeout' : 'error', false];
    }
    // The server said when to come back (429 from API Priority and Fairness): never sooner.
    const askedMs = retryAfterMs(error);
    queue.addRateLimited(key, askedMs);
    const retrying = askedMs
      ? `retrying with backoff, in ${askedMs / 1000} s at the soonest as the API server asked`
      : 'retrying with backoff';
    log.error(`reconcile ${timeout ? 'timed out' : 'failed'} (attempt ${attempt}); ${retrying}: ${error.message}`, {
      error: error.message,
      ...(error.stack && !timeout ? { stack: error.stack } : {}),
    });
    return [timeout ? 'timeout' : 'error', true];
  }

  /** maxRetries failures in a row: forget the key (no backoff requeue) and say so, in the log, a metric and an Event. */
  private giveUp(key: string, error: Error, log: RuntimeLogger, attempt: number, object: T | undefined): void {
    this.options.queue.forget(key);
    const message = `reconcile failed ${attempt} times in a row (maxRetries ${this.options.maxRetries}); not retrying until the object changes: ${error.message}`;
    log.error(message, { error: error.message, attempt });
    this.options.metrics?.retriesExhausted?.();
    const kube = object as KubeObject | undefined;
    if (kube?.metadata?.name && kube.kind) {
      this.options.events?.record(kube, 'Warning', RETRIES_EXHAUSTED_REASON, message, {
        reportingController: this.options.name,
      });
    }
  }
}

/**
 * The reconciler's result, checked: nothing, `{}`, `{ requeue: boolean }` or
 * `{ requeueAfter: ms >= 0 }`. Anything else (`'5000'`, -1, NaN) is an error that names the
 * controller, retried with backoff, never a silent success.
 */
function checkResult(result: unknown, controller: string): ReconcileResult | undefined {
  if (result === undefined || result === null) return undefined;
  const bad = (why: string) =>
    new TypeError(`controller ${controller}: the reconciler returned ${show(result)}: ${why}`);
  if (typeof result !== 'object' || Array.isArray(result)) {
    throw bad('return nothing, { requeueAfter: ms } or { requeue: true }');
  }
  const { requeueAfter, requeue } = result as Record<string, unknown>;
  if (
    requeueAfter !== undefined &&
    (typeof requeueAfter !== 'number' || !Number.isFinite(requeueAfter) || requeueAfter < 0)
  ) {
    throw bad('requeueAfter must be a number of milliseconds >= 0');
  }
  if (requeue !== undefined && typeof requeue !== 'boolean') throw bad('requeue must be true or false');
  return result as ReconcileResult;
}
