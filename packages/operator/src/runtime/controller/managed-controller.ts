import {
  DEFAULT_MAX_CONCURRENT_RECONCILES,
  keyOf,
  refOfObject,
  resourceName,
  silentLogger,
  type KubeObject,
  type ObjectRef,
  type OwnerReference,
  type ResourceDescriptor,
  type RuntimeLogger,
} from '@nestor/core';
import type { Observable, Subscription } from 'rxjs';
import {
  addedKeys,
  externalKeys,
  ownedKeys,
  primaryKeys,
  watchedKeys,
  type StreamFault,
  type Echo,
  type EchoCheck,
  faultMessage,
  groupOf,
} from './event-sources.js';
import { EventVersions } from './event-versions.js';
import type { Informer } from '../cache/informer.js';
import type { InformerCache, InformerHandle, InformerSelector } from '../cache/informer-cache.js';
import { decideKeep, watchedKind, type KeepDecision, type RelatedKind } from '../cache/keep-choice.js';
import { OwnedInformers } from './owned-informers.js';
import type { Predicate } from './predicates.js';
import { positiveDuration, positiveInteger, show } from '../options-check.js';
import {
  checkKeeps,
  checkNamespaces,
  type ClusterBinding,
  type ManagedControllerOptions,
} from './controller-options.js';
import { isTimerItem, objectGroupOf, ObjectTimers } from './object-timers.js';
import { WorkQueue } from '../queue/queue.js';
import { defaultControllerRateLimiter } from '../queue/rate-limiter.js';
import { LeaseLostError } from '../leases/leader-election.js';
import { ReconcileLoop } from './reconcile-loop.js';
import { toError } from './result.js';
import type { LaneGroup, PoolLane, WorkerPool } from './worker-pool.js';

export type { ManagedControllerOptions, OwnedResource } from './controller-options.js';

/**
 * One controller as the manager runs it: event sources -> queue -> shared worker pool ->
 * reconcile loop, with the object read from the shared informer cache (level-based: the
 * reconciler never sees the event, only the current state).
 */
export class ManagedController<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  private readonly log: RuntimeLogger;
  private readonly maxConcurrent: number;
  private readonly loop: ReconcileLoop<T>;
  private readonly timers?: ObjectTimers<T>;
  /** What queued each key, so its run reads nothing older (see EventVersions). */
  private readonly versions: EventVersions;
  private cache?: InformerCache;
  /** The primary kind's informers by namespace ('' when one informer holds every object). */
  private readonly primaries = new Map<string, Informer<T>>();
  /** The owned kinds' informers. */
  private readonly owned = new OwnedInformers();
  private readonly handles: InformerHandle<KubeObject>[] = [];
  private readonly subscriptions: Subscription[] = [];
  private readonly primaryStreams: Subscription[] = [];
  private lane?: PoolLane;
  /** 'standby': prepared and its queue filling, but not dispatching (this replica lost the lease). */
  private state: 'new' | 'prepared' | 'started' | 'standby' | 'stopped' = 'new';

  /** Without a manager, give it the client its runs write through (`client`): a reconcile always has one. */
  constructor(private readonly options: ManagedControllerOptions<T> & ClusterBinding) {
    this.name = options.name;
    this.log = options.logger ?? silentLogger;
    if (typeof options.name !== 'string' || options.name === '') {
      throw new Error(`a controller needs a non-empty name, got ${show(options.name)}`);
    }
    this.maxConcurrent = positiveInteger(
      options.maxConcurrentReconciles ?? DEFAULT_MAX_CONCURRENT_RECONCILES,
      `controller ${options.name}: maxConcurrentReconciles`,
    );
    if (options.maxRetries !== undefined) positiveInteger(options.maxRetries, `controller ${options.name}: maxRetries`);
    if (options.reconcileTimeoutMs !== undefined) {
      positiveDuration(options.reconcileTimeoutMs, `controller ${options.name}: reconcileTimeoutMs`);
    }
    if (options.namespaces !== undefined) checkNamespaces(options.name, options.namespace, options.namespaces);
    checkKeeps(options.name, options);
    if (!options.resource && !options.sources?.length) {
      throw new Error(
        `controller ${options.name} has neither a resource nor sources: give it a kind to watch or an Observable of object refs`,
      );
    }
    if (options.timers?.length && !options.resource) {
      throw new Error(`controller ${options.name} has timers but no resource: a timer runs on each object of the kind`);
    }
    this.queue = new WorkQueue<string>({
      name: options.name,
      ...(options.timers?.length ? { groupOf: objectGroupOf } : {}),
      rateLimiter: options.rateLimiter ?? defaultControllerRateLimiter(options.clock),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.metrics?.queue ? { metrics: options.metrics.queue } : {}),
      ...(options.echoes && options.resource ? { echo: this.echoAtDequeue(options.resource) } : {}),
    });
    this.versions = new EventVersions({
      readers: (kind, namespace) => this.cache?.readersOf(kind, namespace) ?? [],
      ...(options.clock ? { clock: options.clock } : {}),
    });
    this.loop = new ReconcileLoop<T>({
      name: options.name,
      ...(options.resource ? { kind: options.resource.kind } : {}),
      queue: this.queue,
      reconcile: options.reconcile,
      read: (key) => this.read(key),
      catchUp: (key, signal, object) => this.versions.catchUp(key, signal, object, this.primaryOf(key)),
      log: this.log,
      ...(options.reconcileTimeoutMs ? { timeoutMs: options.reconcileTimeoutMs } : {}),
      ...(options.outageHold ? { outageHold: true } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...(options.events ? { events: options.events } : {}),
      client: options.client,
      ...(options.cluster ? { cluster: options.cluster } : {}),
    });
    if (options.timers?.length) {
      this.timers = new ObjectTimers<T>({
        controller: options.name,
        timers: options.timers,
        queue: this.queue,
        read: (key) => this.read(key),
        held: (key) => this.loop.holds(key),
        ...(options.reconcileTimeoutMs ? { timeoutMs: options.reconcileTimeoutMs } : {}),
        client: options.client,
        ...(options.cluster ? { cluster: options.cluster } : {}),
        log: this.log,
      });
    }
  }

  /** The primary kind, if any. */
  get resource(): ResourceDescriptor<T> | undefined {
    return this.options.resource;
  }

  get maxConcurrentReconciles(): number {
    return this.maxConcurrent;
  }

  /** The primary kind's informer, once prepared; with several namespaces, the first one's. */
  get informer(): Informer<T> | undefined {
    return this.primaries.values().next().value;
  }

  /** Objects of the primary kind in its informers. */
  get cachedObjects(): number {
    return [...this.primaries.values()].reduce((total, informer) => total + informer.size, 0);
  }

  /** Objects of the owned kinds in their informers (skeletons of those watched for events only included). */
  get cachedChildren(): number {
    return this.owned.size;
  }

  /**
   * The owned kinds' cached objects whose controller owner is `owner` (by UID): skeletons
   * (key, resourceVersion, labels, owner references) for a kind watched for events only.
   */
  childrenOf(owner: KubeObject): Array<{ resource: ResourceDescriptor; object: KubeObject }> {
    return this.owned.childrenOf(owner);
  }

  /** Whether an owned informer of kind `resource` holds `child`. */
  cachesChild(resource: ResourceDescriptor, child: KubeObject): boolean {
    return this.owned.holds(resource, child);
  }

  /**
   * The cached primary object that `ref` names as the controller owner of an object of
   * kind `child` in `namespace`, when this controller owns that kind; else undefined.
   */
  ownerOf(ref: OwnerReference, namespace: string | undefined, child: ResourceDescriptor): T | undefined {
    const { resource } = this.options;
    if (!resource || ref.kind !== resource.kind || groupOf(ref.apiVersion) !== resource.group) return undefined;
    if (!this.owned.owns(child)) return undefined;
    return this.read(resource.namespaced && namespace ? `${namespace}/${ref.name}` : ref.name) ?? undefined;
  }

  /** Informers whose sync must complete before this controller starts. */
  get informers(): Informer<KubeObject>[] {
    return this.handles.map((h) => h.informer);
  }

  /**
   * Acquires the informers and subscribes to every event source. Requests queue up but are
   * not dispatched until start(): the manager starts controllers once the caches are synced.
   */
  prepare(cache: InformerCache): void {
    if (this.state !== 'new') return;
    this.state = 'prepared';
    this.cache = cache;
    const { resource, owns = [], watches = [], sources = [] } = this.options;
    const report = (fault: StreamFault) => this.report(fault);
    const acquire = <R>(kind: ResourceDescriptor<R>, selector: InformerSelector) => {
      const handle = cache.acquire(kind, selector);
      this.handles.push(handle as InformerHandle<KubeObject>);
      return handle.informer;
    };
    const scope = this.scope();
    const echoOf = (kind: ResourceDescriptor): EchoCheck | undefined => {
      this.options.echoes?.follow(this.name, resourceName(kind));
      return this.echoCheck(kind);
    };
    const queuedBy = (informer: Informer<KubeObject>) => this.versions.queuedBy(informer);

    if (resource) {
      for (const [index, indexer] of Object.entries(this.options.indexes ?? {}))
        cache.indexField(resource, index, indexer);
      const name = resourceName(resource);
      const primaryEcho = echoOf(resource);
      for (const namespace of resource.namespaced ? scope : [undefined]) {
        const informer = acquire(resource, { ...this.selector(), ...(namespace ? { namespace } : {}) });
        this.primaries.set(namespace ?? '', informer);
        const keys = primaryKeys(name, informer, this.predicates(), report, primaryEcho, queuedBy(informer));
        this.primaryStreams.push(this.feed(namespace && scope.length > 1 ? `${name} in ${namespace}` : name, keys));
        const timers = this.timers;
        if (timers) this.subscriptions.push(addedKeys(informer).subscribe((key) => timers.start(key)));
      }
    }
    const shard = this.options.shard;
    for (const entry of owns) {
      const { resource: owned, metadataOnly, keep } = 'resource' in entry ? entry : { resource: entry };
      const childEcho = echoOf(owned);
      const related: RelatedKind = { role: 'owns', keep, metadataOnly, selected: !!shard };
      const kept = this.keep(`owns ${resourceName(owned)}`, cache, owned, related);
      for (const namespace of owned.namespaced ? scope : [undefined]) {
        // On a shard, only its share of the children: those labelled with their owner's shard.
        const informer = acquire(owned, {
          ...(namespace ? { namespace } : {}),
          ...(shard ? { labelSelector: shard.selector } : {}),
          ...kept.selector,
        });
        this.owned.add(owned, informer as Informer<KubeObject>);
        this.feed(`owns ${resourceName(owned)}`, ownedKeys(informer, resource!, childEcho, queuedBy(informer)));
        const seen = shard?.childSeen;
        if (seen) {
          this.subscriptions.push(
            informer.events$.subscribe((event) => {
              if (event.type !== 'deleted') seen(owned, event.object);
            }),
          );
        }
      }
    }
    for (const watch of watches) {
      const namespaces = watch.namespaces ?? [watch.namespace];
      const name = `watches ${resourceName(watch.resource)}`;
      const kept = this.keep(name, cache, watch.resource, watchedKind(watch));
      for (const namespace of watch.resource.namespaced ? namespaces : [undefined]) {
        const informer = acquire(watch.resource, {
          ...(namespace ? { namespace } : {}),
          ...(watch.labelSelector ? { labelSelector: watch.labelSelector } : {}),
          ...(watch.fieldSelector ? { fieldSelector: watch.fieldSelector } : {}),
          ...kept.selector,
        });
        this.feed(name, watchedKeys(name, informer, watch, report, queuedBy(informer)));
      }
    }
    sources.forEach((source, i) => {
      const named = 'stream' in source ? source : { name: `source ${i + 1}`, stream: source };
      named.noteWith?.((key, informer, object, readers) => this.versions.note(key, informer, object, readers));
      this.feed(named.name, externalKeys(named, report));
    });
  }

  /** What the informers of an owned or watched kind keep (decideKeep), said in a debug line. */
  private keep(stream: string, cache: InformerCache, kind: ResourceDescriptor, related: RelatedKind): KeepDecision {
    const decision = decideKeep({ ...related, kindKeep: cache.keepOf(kind) });
    this.log.debug(`controller ${this.name}, ${stream}: ${decision.why}`, { controller: this.name, stream });
    return decision;
  }

  /**
   * Whether every stream still feeds the queue. The primary kind's stream ends only if its
   * informer fails for good; a controller without it reconciles nothing new.
   */
  get streamsLive(): { ok: boolean; detail?: string } {
    if (this.state === 'stopped' || this.state === 'new') return { ok: true };
    if (this.primaryStreams.some((stream) => stream.closed)) {
      return { ok: false, detail: 'the primary kind no longer feeds the queue' };
    }
    return { ok: true };
  }

  /** Starts dispatching requests to the pool; its lane joins `group` (its cluster's) when given. */
  start(pool: WorkerPool, group?: LaneGroup): void {
    if (this.state !== 'prepared' && this.state !== 'standby')
      throw new Error(`controller ${this.name} must be prepared before it starts (state ${this.state})`);
    if (this.state === 'standby') this.loop.resume();
    this.state = 'started';
    this.lane = pool.register({
      name: this.name,
      queue: this.queue,
      maxConcurrent: this.maxConcurrent,
      process: (item) => (this.timers && isTimerItem(item) ? this.timers.process(item) : this.loop.process(item)),
      ...(group ? { group } : {}),
    });
    this.log.info(`controller ${this.name} started`, {
      resource: this.options.resource ? resourceName(this.options.resource) : undefined,
      maxConcurrentReconciles: this.maxConcurrent,
    });
  }

  /**
   * Stops dispatching at once and aborts the running reconciles, without a grace period,
   * and resolves once they returned: this replica lost the lease and must not write. The
   * informers and the queue go on, so the controller is a warm standby; start() again
   * when the lease is won back.
   */
  async standBy(): Promise<void> {
    if (this.state !== 'started') return;
    this.state = 'standby';
    this.lane?.unregister();
    this.lane = undefined;
    // A LeaseLostError: the runs it cuts end as 'fenced', left to the replica that holds the Lease.
    const lost = new LeaseLostError('this replica lost the lease');
    this.loop.abortAll(lost);
    this.timers?.abortAll(lost);
    await Promise.all([this.loop.settled(), this.timers?.settled()]);
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
  async stop(graceMs: number): Promise<boolean> {
    if (this.state === 'stopped') return true;
    const wasStarted = this.state === 'started';
    this.state = 'stopped';
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    const drained = await this.queue.shutDownWithDrain(graceMs);
    if (!drained) {
      this.log.warn(
        `controller ${this.name}: ${this.loop.inFlight} reconcile(s) still running after the ${graceMs} ms grace period; aborting them`,
      );
      const stopping = new Error('the operator is shutting down');
      this.loop.abortAll(stopping);
      this.timers?.abortAll(stopping);
    }
    // Aborted runs (and timed-out ones that ignored their signal) may still write: nothing
    // after this (the lease release, the user's providers' teardown) may go before they end.
    if (this.loop.unsettledRuns > 0) {
      this.log.info(`controller ${this.name}: waiting for ${this.loop.unsettledRuns} aborted reconcile(s) to return`);
      await this.loop.settled();
    }
    await this.timers?.settled();
    this.lane?.unregister();
    for (const handle of this.handles.splice(0)) handle.release();
    this.versions.clear();
    this.options.echoes?.unfollow(this.name);
    if (wasStarted) this.log.info(`controller ${this.name} stopped`);
    return drained;
  }

  /** Subscribes one stream to the queue, on its own: its end cannot end the others. */
  private feed(name: string, keys: Observable<string | Echo>): Subscription {
    const subscription = keys.subscribe({
      next: (key) => (typeof key === 'string' ? this.queue.add(key) : this.queue.add(key.key, 'low')),
      error: (error: unknown) => this.report({ stream: name, kind: 'source-error', error: toError(error) }),
    });
    this.subscriptions.push(subscription);
    return subscription;
  }

  private report(fault: StreamFault): void {
    const { stream, kind, error, object } = fault;
    this.options.metrics?.streamFault?.(stream, kind);
    this.log.error(`controller ${this.name}, ${stream}: ${faultMessage(fault)}: ${error.message}`, {
      controller: this.name,
      stream,
      fault: kind,
      error: error.message,
      ...(object ? { object: keyOf(refOfObject(object)) } : {}),
    });
  }

  /** Whether an object of `kind` is as this controller's last write to it left it (see WriteEchoes). */
  private echoCheck(kind: ResourceDescriptor): EchoCheck | undefined {
    const echoes = this.options.echoes;
    if (!echoes) return undefined;
    const name = resourceName(kind);
    return (key, object) => echoes.take(this.name, name, key, object.metadata?.resourceVersion);
  }

  /**
   * At dequeue: whether the cached object is still as this controller's last write left it
   * (its echo came before the write's answer, so the add could not tell).
   */
  private echoAtDequeue(resource: ResourceDescriptor): (key: string) => boolean {
    const echoOf = this.echoCheck(resource)!;
    return (key) => {
      const object = this.read(key);
      return !!object && echoOf(key, object);
    };
  }

  /** The cached object of a key, from the informer of its namespace. */
  private read(key: string): T | undefined | null {
    return this.primaries.size === 0 ? undefined : (this.primaryOf(key)?.get(key) ?? null);
  }

  /** The primary informer that holds `key`'s object. */
  private primaryOf(key: string): Informer<T> | undefined {
    const all = this.primaries.get('');
    if (all) return all;
    const slash = key.indexOf('/');
    return slash > 0 ? this.primaries.get(key.slice(0, slash)) : undefined;
  }

  /** The namespaces the primary and owned kinds are watched in (undefined: all). */
  private scope(): readonly (string | undefined)[] {
    const { namespace, namespaces } = this.options;
    return namespaces ?? [namespace];
  }

  /** The primary kind's predicates; on a shard, a drain request passes them all. */
  private predicates(): Predicate<T>[] {
    const { predicates = [], shard } = this.options;
    if (!shard || predicates.length === 0) return predicates;
    return [(event) => shard.bypass(event.object) || predicates.every((predicate) => predicate(event))];
  }

  private selector(): InformerSelector {
    const { fieldSelector, shard } = this.options;
    const labelSelector = [this.options.labelSelector, shard?.selector].filter(Boolean).join(',');
    return {
      ...(labelSelector ? { labelSelector } : {}),
      ...(fieldSelector ? { fieldSelector } : {}),
    };
  }
}
