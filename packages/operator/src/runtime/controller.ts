import { randomUUID } from 'node:crypto';
import { filter, merge, mergeMap, Observable, type Subscription } from 'rxjs';
import type { Clock } from './clock.js';
import type { Informer, InformerCache, InformerHandle } from './informer.js';
import type { KubeObject } from './kube-object.js';
import { silentLogger, type RuntimeLogger } from './logger.js';
import { keyOf, refOf, type ObjectRef } from './object-ref.js';
import type { Predicate, ResourceEvent } from './predicates.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';
import { WorkQueue, type QueueMetricsSink } from './queue.js';
import { isTerminal, ReconcileTimeoutError, toError, type ReconcileResult } from './result.js';
import { resourceName, type ResourceDescriptor } from './resource.js';
import type { PoolLane, WorkerPool } from './worker-pool.js';

/** Everything one reconcile gets: the request, the cached object, a bound logger, a signal. */
export interface ReconcileRequest<T> {
  /** The object's reference: `{ namespace, name }`. */
  readonly ref: ObjectRef;
  /** Its queue key, `namespace/name`. */
  readonly key: string;
  /** The current object from the cache; undefined only for controllers without a primary kind. */
  readonly object: T | undefined;
  /** Aborted on the reconcile timeout and on shutdown past the grace period. */
  readonly signal: AbortSignal;
  /** 1 for the first try, n for the n-th retry in a row after errors. */
  readonly attempt: number;
  /** Unique per run: ties the logs and spans of one reconcile together. */
  readonly reconcileId: string;
  /** A logger bound to controller, namespace, name and reconcile ID. */
  readonly log: RuntimeLogger;
}

export type Reconciler<T> = (request: ReconcileRequest<T>) => Promise<ReconcileResult | void> | ReconcileResult | void;

/** A related kind whose events are mapped to requests of the primary kind. */
export interface WatchSource<R = KubeObject> {
  resource: ResourceDescriptor<R>;
  /** Method syntax on purpose: a mapper of a concrete kind is a mapper of KubeObject. */
  map(object: R, event: ResourceEvent<R>): ObjectRef[] | ObjectRef | undefined | null;
  namespace?: string;
  labelSelector?: string;
  predicates?: Predicate<R>[];
}

/** How a reconcile ended, for metrics and hooks: controller-runtime's result label. */
export type ReconcileOutcome = 'success' | 'requeue' | 'requeue_after' | 'error' | 'terminal_error' | 'timeout';

/** Metrics the controller reports; the Nest layer binds them to Prometheus. */
export interface ControllerMetricsSink {
  /** One finished reconcile; `error` is what it threw, if anything. */
  reconciled(outcome: ReconcileOutcome, seconds: number, error?: Error): void;
  activeWorkers(delta: 1 | -1): void;
  queue?: QueueMetricsSink;
}

export interface ControllerOptions<T> {
  /** Unique name: metrics label, log field, queue name. */
  name: string;
  /** The primary kind. Absent for a controller fed only by `sources`. */
  resource?: ResourceDescriptor<T>;
  reconcile: Reconciler<T>;
  /** Watch the primary kind in this namespace only (default: all, or the manager's). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Filters for the primary kind's events. */
  predicates?: Predicate<T>[];
  /** Kinds this controller creates: their events reconcile the controller owner. */
  owns?: ResourceDescriptor[];
  /** Other kinds whose events map to requests. */
  watches?: WatchSource<KubeObject>[];
  /** Any stream of requests: a poller over an external API, a message stream. */
  sources?: Observable<ObjectRef | ObjectRef[]>[];
  /** Reconciles of this controller at once (default 1). */
  maxConcurrentReconciles?: number;
  /** Abort a reconcile after this long and retry it with backoff. */
  reconcileTimeoutMs?: number;
  rateLimiter?: RateLimiter<string>;
  logger?: RuntimeLogger;
  metrics?: ControllerMetricsSink;
  clock?: Clock;
}

/**
 * One controller: sources -> predicates -> queue -> shared worker pool -> reconciler,
 * with the object read from the shared informer cache (level-based: the reconciler
 * never sees the event, only the current state).
 */
export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  private readonly log: RuntimeLogger;
  private readonly maxConcurrent: number;
  private primary?: Informer<T>;
  private readonly handles: InformerHandle<KubeObject>[] = [];
  private subscription?: Subscription;
  private lane?: PoolLane;
  private readonly running = new Map<string, AbortController>();
  /** Keys whose timed-out run has not settled yet: not run again until it does. */
  private readonly hung = new Map<string, { rerun: boolean }>();
  private state: 'new' | 'prepared' | 'started' | 'stopped' = 'new';

  constructor(private readonly options: ControllerOptions<T>) {
    this.name = options.name;
    this.log = options.logger ?? silentLogger;
    this.maxConcurrent = Math.max(1, options.maxConcurrentReconciles ?? 1);
    this.queue = new WorkQueue<string>({
      name: options.name,
      rateLimiter: options.rateLimiter ?? defaultControllerRateLimiter(options.clock),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.metrics?.queue ? { metrics: options.metrics.queue } : {}),
    });
    if (!options.resource && !options.sources?.length) {
      throw new Error(
        `controller ${options.name} has neither a resource nor sources: give it a kind to watch or an Observable of object refs`,
      );
    }
  }

  get maxConcurrentReconciles(): number {
    return this.maxConcurrent;
  }

  /** The primary kind's informer, once prepared. */
  get informer(): Informer<T> | undefined {
    return this.primary;
  }

  /** Informers whose sync must complete before this controller starts. */
  get informers(): Informer<KubeObject>[] {
    return this.handles.map((h) => h.informer);
  }

  /**
   * Acquires the informers and subscribes to every source. Requests queue up but are not
   * dispatched until start(): the manager starts controllers once the caches are synced.
   */
  prepare(cache: InformerCache): void {
    if (this.state !== 'new') return;
    this.state = 'prepared';
    const { resource, owns = [], watches = [], sources = [] } = this.options;
    const streams: Observable<string>[] = [];

    if (resource) {
      const handle = cache.acquire(resource, this.selector());
      this.handles.push(handle as InformerHandle<KubeObject>);
      this.primary = handle.informer;
      const predicates = this.options.predicates ?? [];
      streams.push(
        this.replayThenFollow(handle.informer as Informer<KubeObject>).pipe(
          filter((event) => predicates.every((p) => p(event as ResourceEvent<T>))),
          mergeMap((event) => [keyOf(refFromObject(event.object))]),
        ),
      );
    }

    for (const owned of owns) {
      const handle = cache.acquire(owned, this.options.namespace ? { namespace: this.options.namespace } : {});
      this.handles.push(handle);
      const owner = resource!;
      streams.push(
        this.replayThenFollow(handle.informer).pipe(
          mergeMap((event) => {
            const keys = new Set<string>();
            for (const object of event.old ? [event.old, event.object] : [event.object]) {
              const key = ownerKey(object, owner);
              if (key) keys.add(key);
            }
            return [...keys];
          }),
        ),
      );
    }

    for (const watch of watches) {
      const handle = cache.acquire(watch.resource, {
        ...(watch.namespace ? { namespace: watch.namespace } : {}),
        ...(watch.labelSelector ? { labelSelector: watch.labelSelector } : {}),
      });
      this.handles.push(handle);
      const predicates = watch.predicates ?? [];
      streams.push(
        this.replayThenFollow(handle.informer).pipe(
          filter((event) => predicates.every((p) => p(event))),
          mergeMap((event) => this.mapSafely(watch, event)),
        ),
      );
    }

    for (const source of sources) {
      streams.push(source.pipe(mergeMap((refs) => (Array.isArray(refs) ? refs : [refs]).map((ref) => keyOf(ref)))));
    }

    this.subscription = merge(...streams).subscribe({
      next: (key) => this.queue.add(key),
      error: (error: unknown) =>
        this.log.error(`a source of controller ${this.name} failed and stopped feeding it`, {
          error: toError(error).message,
        }),
    });
  }

  /** Starts dispatching requests to the pool. */
  start(pool: WorkerPool): void {
    if (this.state !== 'prepared')
      throw new Error(`controller ${this.name} must be prepared before it starts (state ${this.state})`);
    this.state = 'started';
    this.lane = pool.register({
      name: this.name,
      queue: this.queue,
      maxConcurrent: this.maxConcurrent,
      process: (key) => this.process(key),
    });
    this.log.info(`controller ${this.name} started`, {
      resource: this.options.resource ? resourceName(this.options.resource) : undefined,
      maxConcurrentReconciles: this.maxConcurrent,
    });
  }

  /** Enqueues a request directly (e.g. from an HTTP webhook). */
  enqueue(ref: ObjectRef, afterMs = 0): void {
    if (afterMs > 0) this.queue.addAfter(keyOf(ref), afterMs);
    else this.queue.add(keyOf(ref));
  }

  /**
   * Stops intake, lets running reconciles finish within the grace period, then aborts the
   * rest and releases the informers. Resolves true when everything finished in time.
   */
  async stop(graceMs = 30_000): Promise<boolean> {
    if (this.state === 'stopped') return true;
    const wasStarted = this.state === 'started';
    this.state = 'stopped';
    this.subscription?.unsubscribe();
    const drained = await this.queue.shutDownWithDrain(graceMs);
    if (!drained) {
      this.log.warn(
        `controller ${this.name}: ${this.running.size} reconcile(s) still running after the ${graceMs} ms grace period; aborting them`,
      );
      for (const controller of this.running.values()) controller.abort(new Error('the operator is shutting down'));
    }
    this.lane?.unregister();
    for (const handle of this.handles.splice(0)) handle.release();
    if (wasStarted) this.log.info(`controller ${this.name} stopped`);
    return drained;
  }

  private selector() {
    const { namespace, labelSelector, fieldSelector } = this.options;
    return {
      ...(namespace ? { namespace } : {}),
      ...(labelSelector ? { labelSelector } : {}),
      ...(fieldSelector ? { fieldSelector } : {}),
    };
  }

  /** The informer's current content as 'added' events, then its live events (dedup makes overlap harmless). */
  private replayThenFollow(informer: Informer<KubeObject>): Observable<ResourceEvent<KubeObject>> {
    return new Observable<ResourceEvent<KubeObject>>((subscriber) => {
      const live = informer.events$.subscribe(subscriber);
      for (const object of informer.list()) subscriber.next({ type: 'added', object });
      return live;
    });
  }

  private mapSafely(watch: WatchSource<KubeObject>, event: ResourceEvent<KubeObject>): string[] {
    try {
      const mapped = watch.map(event.object, event);
      if (!mapped) return [];
      return (Array.isArray(mapped) ? mapped : [mapped]).map((ref) => keyOf(ref));
    } catch (error) {
      this.log.error(
        `controller ${this.name}: the mapper for ${resourceName(watch.resource)} threw; the event is ignored`,
        {
          object: keyOf(refFromObject(event.object)),
          error: toError(error).message,
        },
      );
      return [];
    }
  }

  /** One run for one key. Never rejects: every outcome is turned into a queue decision. */
  private async process(key: string): Promise<void> {
    const hung = this.hung.get(key);
    if (hung) {
      hung.rerun = true; // its timed-out run still holds the key; run again when it settles
      return;
    }
    const object = this.primary?.get(key);
    if (this.primary && !object) {
      // Deleted before we got to it: nothing to converge (a finalizer handles deletions).
      this.queue.forget(key);
      return;
    }
    const abort = new AbortController();
    this.running.set(key, abort);
    const ref = refOf(key);
    const reconcileId = randomUUID();
    const attempt = this.queue.numRequeues(key) + 1;
    const log = bindLogger(this.log, { controller: this.name, namespace: ref.namespace, name: ref.name, reconcileId });
    const started = performance.now();
    this.options.metrics?.activeWorkers(1);
    let outcome: ReconcileOutcome;
    let failure: Error | undefined;
    const run = (async () =>
      this.options.reconcile({ ref, key, object, signal: abort.signal, attempt, reconcileId, log }))();
    try {
      const result = await this.withTimeout(run, abort);
      outcome = this.settle(key, result ?? undefined);
    } catch (thrown) {
      failure = toError(thrown);
      outcome = this.fail(key, failure, log, attempt);
      if (failure instanceof ReconcileTimeoutError) this.holdUntilSettled(key, run);
    } finally {
      this.running.delete(key);
      this.options.metrics?.activeWorkers(-1);
    }
    this.options.metrics?.reconciled(outcome, (performance.now() - started) / 1000, failure);
  }

  private withTimeout<R>(run: Promise<R>, abort: AbortController): Promise<R> {
    const timeoutMs = this.options.reconcileTimeoutMs;
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
   * worker is freed, but the key is not run again until that run settles, so two runs of
   * one object never overlap.
   */
  private holdUntilSettled(key: string, run: Promise<unknown>): void {
    const entry = { rerun: false };
    this.hung.set(key, entry);
    const release = () => {
      this.hung.delete(key);
      if (entry.rerun && !this.queue.isShuttingDown) this.queue.addRateLimited(key);
    };
    run.then(release, release);
  }

  private settle(key: string, result: ReconcileResult | undefined): ReconcileOutcome {
    if (result?.requeueAfter !== undefined && result.requeueAfter > 0) {
      this.queue.forget(key);
      this.queue.addAfter(key, result.requeueAfter);
      return 'requeue_after';
    }
    if (result?.requeue) {
      this.queue.addRateLimited(key);
      return 'requeue';
    }
    this.queue.forget(key);
    return 'success';
  }

  private fail(key: string, error: Error, log: RuntimeLogger, attempt: number): ReconcileOutcome {
    if (isTerminal(error)) {
      this.queue.forget(key);
      log.error(`reconcile failed with a terminal error; not retrying until the object changes: ${error.message}`, {
        error: error.message,
      });
      return 'terminal_error';
    }
    this.queue.addRateLimited(key);
    const timeout = error instanceof ReconcileTimeoutError;
    log.error(
      `reconcile ${timeout ? 'timed out' : 'failed'} (attempt ${attempt}); retrying with backoff: ${error.message}`,
      {
        error: error.message,
        ...(error.stack && !timeout ? { stack: error.stack } : {}),
      },
    );
    return timeout ? 'timeout' : 'error';
  }
}

function refFromObject(object: KubeObject): ObjectRef {
  const { name = '', namespace } = object.metadata ?? {};
  return namespace ? { namespace, name } : { name };
}

/** The key of the object's controller owner when it is of the given kind. */
function ownerKey(object: KubeObject, owner: ResourceDescriptor): string | undefined {
  const ref = object.metadata?.ownerReferences?.find((o) => o.controller);
  // Owner references name a group/version; any version of the owner's group matches.
  if (!ref || ref.kind !== owner.kind || groupOf(ref.apiVersion) !== owner.group) return undefined;
  const namespace = owner.namespaced ? object.metadata?.namespace : undefined;
  return keyOf(namespace ? { namespace, name: ref.name } : { name: ref.name });
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function bindLogger(log: RuntimeLogger, bound: Record<string, unknown>): RuntimeLogger {
  const fields = Object.fromEntries(Object.entries(bound).filter(([, v]) => v !== undefined));
  return {
    debug: (message, extra) => log.debug(message, { ...fields, ...extra }),
    info: (message, extra) => log.info(message, { ...fields, ...extra }),
    warn: (message, extra) => log.warn(message, { ...fields, ...extra }),
    error: (message, extra) => log.error(message, { ...fields, ...extra }),
  };
}
