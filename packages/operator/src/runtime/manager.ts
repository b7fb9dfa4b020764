import {
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  DEFAULT_CONCURRENCY,
  DEFAULT_SHUTDOWN_GRACE_MS,
  type KubeObject,
  type ResourceDescriptor,
  resourceName,
  type RuntimeLogger,
  silentLogger,
  type Transport,
} from '@nestor/core';
import { EventRecorder, type EventRecorderMetrics, type EventRecorderOptions } from '../client/event-recorder.js';
import type { KindRegistry } from '../client/kind-registry.js';
import { HttpKubeClient } from '../client/http-kube-client.js';
import type { KubeClient } from '../client/kube-client.js';
import type { WriteEchoes } from '../client/write-echoes.js';
import { Coordination, type LeaderElection } from './coordination.js';
import { ManagedController, type ManagedControllerOptions } from './managed-controller.js';
import type { ControllerMetricsSink } from './reconcile-loop.js';
import type { Informer } from './informer.js';
import { InformerCache } from './informer-cache.js';
import type { WorkQueue } from './queue.js';
import type { ShardedChild, ShardScope } from './shard-scope.js';
import { positiveDuration, positiveInteger } from './options-check.js';
import { OutageGate, type OutageMetrics } from './outage-gate.js';
import { WorkerPool } from './worker-pool.js';
import type { LeaseFence } from './write-fence.js';

export type { EventRecorderMetrics, LeaderElection };

/** Where controllers report metrics (OperatorMetrics binds this to Prometheus). */
export interface ManagerMetrics {
  controllerSink(controller: string, maxConcurrentReconciles: number): ControllerMetricsSink;
  trackQueue(controller: string, queue: WorkQueue<string>): void;
  /** Where the manager's Event recorder reports written and dropped Events. */
  eventSink?(): EventRecorderMetrics;
  /** Where the outage gate reports outages of the API server. */
  outageSink?(): OutageMetrics;
}

export interface ManagerOptions {
  transport: Transport;
  /** Reconciles running at once across all controllers (default 16). */
  concurrency?: number;
  /** Bound on the wait for the caches' first sync (default 2 min, as controller-runtime). */
  syncTimeoutMs?: number;
  /** How long running reconciles may take to finish on stop (default 30 s). */
  shutdownGraceMs?: number;
  /** Informer cache to share (default: one of the manager's own on the transport). */
  informers?: InformerCache;
  leaderElection?: LeaderElection;
  metrics?: ManagerMetrics;
  /**
   * The Event recorder the controllers' maxRetries warnings and `manager.client`'s Events
   * go to, or the options of the one the manager makes on the transport, fenced by its
   * Leases (the default). stop() flushes it.
   */
  events?: EventRecorder | Omit<EventRecorderOptions, 'fence'>;
  /** `manager.client`'s field manager (default 'nestor'); also its Events' reporting controller. */
  fieldManager?: string;
  /** `manager.client`'s kinds (default: a registry of its own). */
  kinds?: KindRegistry;
  /** Bound on the flush of pending Events on stop (default 5 s). */
  eventFlushMs?: number;
  /**
   * Called when the lease was lost, once the running reconciles were aborted and returned.
   * The controllers are then a warm standby and the manager campaigns again, unless this
   * ends the process (controller-runtime's default).
   */
  onLeadershipLost?: () => void;
  /**
   * Built-in sharding (sharding/'s ShardCoordinator): the controllers with a kind run on
   * this replica's share of the objects while it holds its shard Lease; the elected leader
   * assigns objects to shards and runs the controllers marked `sharded: false`. Needs
   * `leaderElection`.
   */
  sharding?: ShardScope;
  logger?: RuntimeLogger;
}

type State = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/** One health check's verdict, as /readyz and the terminus indicator report it. */
export interface HealthCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

export interface ManagerHealth {
  /** The process works (liveness): false only once the manager failed or stopped. */
  live: boolean;
  /** It can do its job (readiness): caches synced and watches healthy; a standby is ready. */
  ready: boolean;
  checks: HealthCheck[];
}

/**
 * Owns the worker pool, the shared informer cache, the client and the controllers. Start
 * order: informers syncing (bounded wait) and the Lease loops (Coordination) at once ->
 * controllers once both are done (sharded: the Lease loops after the sync). Stop order
 * reverse, with a drain grace period.
 */
export class Manager {
  readonly pool: WorkerPool;
  /** Holds dispatch while the API server does not answer. */
  readonly outage: OutageGate;
  readonly informers: InformerCache;
  /** Records Events best effort (see EventRecorder); flushed on stop. */
  readonly events: EventRecorder;
  /**
   * The client of this manager's controllers (controller-runtime's mgr.GetClient()): reads
   * from its informers, writes fenced by whichever of its Leases applies, Events to its
   * recorder. Each reconcile gets it scoped to its controller and signal as `request.client`;
   * used as is, it reads both from the ambient context.
   */
  readonly client: KubeClient;
  /** Where the client notes its controllers' writes, to know their watch events as echoes. */
  private readonly echoes: WriteEchoes;
  /** The leader and shard Lease loops, and the write fence they make. */
  private readonly coordination: Coordination;
  private readonly controllers = new Map<string, ManagedController<KubeObject>>();
  private readonly started = new Set<ManagedController<KubeObject>>();
  /** Controllers that run on this shard's objects (sharding only); the others run on the leader. */
  private readonly sharded = new Set<ManagedController<KubeObject>>();
  private readonly log: RuntimeLogger;
  private readonly syncTimeoutMs: number;
  private readonly shutdownGraceMs: number;
  private state: State = 'idle';
  private readonly abort = new AbortController();
  /** Caches synced: a standby waiting for the lease is ready. */
  private caches = false;

  constructor(private readonly options: ManagerOptions) {
    this.log = options.logger ?? silentLogger;
    this.coordination = new Coordination({
      ...(options.leaderElection ? { leaderElection: options.leaderElection } : {}),
      ...(options.sharding ? { sharding: options.sharding } : {}),
      runsOnLeader: (name) => {
        const controller = this.controllers.get(name);
        return controller !== undefined && !this.sharded.has(controller);
      },
      logger: this.log,
    });
    this.pool = new WorkerPool({
      concurrency: positiveInteger(options.concurrency ?? DEFAULT_CONCURRENCY, "the manager's concurrency"),
    });
    this.informers = options.informers ?? new InformerCache(options.transport, { logger: this.log });
    const outageMetrics = options.metrics?.outageSink?.();
    this.outage = new OutageGate({
      transport: options.transport,
      pool: this.pool,
      logger: this.log,
      ...(outageMetrics ? { metrics: outageMetrics } : {}),
    });
    const fence = this.coordination.fence;
    const eventMetrics = options.metrics?.eventSink?.();
    const { events, fieldManager } = options;
    this.events =
      events instanceof EventRecorder
        ? events
        : new EventRecorder(options.transport, {
            logger: this.log,
            ...(fieldManager ? { reportingController: fieldManager } : {}),
            ...(eventMetrics ? { metrics: eventMetrics } : {}),
            ...events,
            ...(fence.fences ? { fence } : {}),
          });
    const sharding = options.sharding;
    // The hand-over finds an owner's children in the sharded controllers' owned informers.
    sharding?.useChildren((owner, object) => this.childrenOf(owner, object));
    const client = new HttpKubeClient(options.transport, {
      informers: this.informers,
      events: this.events,
      ...(sharding
        ? { childLabels: (object: KubeObject, resource: ResourceDescriptor) => this.childLabels(object, resource) }
        : {}),
      ...(fence.fences ? { fence } : {}),
      ...(fieldManager ? { fieldManager } : {}),
      ...(options.kinds ? { kinds: options.kinds } : {}),
    });
    this.client = client;
    this.echoes = client.echoes;
    this.syncTimeoutMs = positiveDuration(
      options.syncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS,
      'the cache sync timeout',
    );
    this.shutdownGraceMs = positiveDuration(
      options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS,
      'the shutdown grace period',
    );
  }

  get transport(): Transport {
    return this.options.transport;
  }

  get isRunning(): boolean {
    return this.state === 'running';
  }

  /**
   * What every write asks first (see LeaseFence): the lease, with leader election; nothing
   * without. When sharded, the Lease of whoever writes: the leader Lease for a `sharded:
   * false` controller's writes, the shard's Lease for every other. `manager.client` and
   * the manager's Event recorder are fenced by it.
   * @internal
   */
  get writeFence(): LeaseFence | undefined {
    const fence = this.coordination.fence;
    return fence.fences ? fence : undefined;
  }

  /** True once this process leads (always, without leader election). */
  get isLeader(): boolean {
    return this.coordination.isLeader;
  }

  /**
   * Objects the sharded controllers cache: this shard's share of their kinds and of their
   * children (0 without sharding).
   */
  get shardedObjects(): number {
    let total = 0;
    for (const controller of this.sharded) total += controller.cachedObjects + controller.cachedChildren;
    return total;
  }

  /** Of these, the children (objects of the sharded controllers' owned kinds). */
  get shardedChildren(): number {
    let total = 0;
    for (const controller of this.sharded) total += controller.cachedChildren;
    return total;
  }

  /** The controllers by name. */
  get controllerNames(): string[] {
    return [...this.controllers.keys()];
  }

  getController(name: string): ManagedController<KubeObject> | undefined {
    return this.controllers.get(name);
  }

  /**
   * Adds a controller. Before start() it starts with the others; on a running manager it
   * starts as soon as its caches are synced.
   */
  addController<T extends KubeObject>(options: ManagedControllerOptions<T>): ManagedController<T> {
    if (this.controllers.has(options.name)) {
      throw new Error(`a controller named "${options.name}" is already registered: give each controller a unique name`);
    }
    if (this.state === 'stopping' || this.state === 'stopped')
      throw new Error(`cannot add controller ${options.name}: the manager is stopping`);
    const metrics = this.options.metrics;
    const sharding = this.options.sharding;
    const resource = options.resource;
    const sharded = Boolean(sharding && resource && options.sharded !== false);
    const controller = new ManagedController<T>({
      logger: this.log,
      outageHold: true,
      events: this.events,
      client: this.client,
      echoes: this.echoes,
      ...(metrics ? { metrics: metrics.controllerSink(options.name, options.maxConcurrentReconciles ?? 1) } : {}),
      ...options,
      ...(sharded
        ? {
            shard: {
              selector: sharding!.selector,
              bypass: (object: KubeObject) => sharding!.bypassesPredicates(object),
              childSeen: (owned: ResourceDescriptor, child: KubeObject) => sharding!.childSeen(resource!, owned, child),
            },
            reconcile: sharding!.wrap(resource as ResourceDescriptor<T>, options.reconcile),
            ...(options.timers
              ? { timers: options.timers.map((timer) => sharding!.wrapTimer(resource as ResourceDescriptor<T>, timer)) }
              : {}),
          }
        : {}),
    });
    const managed = controller as unknown as ManagedController<KubeObject>;
    if (sharded) {
      this.sharded.add(managed);
      const owned = (options.owns ?? []).map((entry) => ('resource' in entry ? entry.resource : entry));
      const { labelSelector, fieldSelector } = options;
      // The objects the controller watches, in each of its namespaces: the assigner labels no others.
      for (const namespace of options.namespaces ?? [options.namespace]) {
        sharding!.addKinds(resource!, owned, {
          ...(namespace ? { namespace } : {}),
          ...(labelSelector ? { labelSelector } : {}),
          ...(fieldSelector ? { fieldSelector } : {}),
        });
      }
    }
    metrics?.trackQueue(options.name, controller.queue as WorkQueue<string>);
    this.controllers.set(options.name, managed);
    if (this.state === 'running') {
      controller.prepare(this.informers);
      void this.waitForSync(controller.informers).then(
        () => (this.state === 'running' && this.mayRun(managed) ? this.startController(managed) : undefined),
        (error: Error) => this.log.error(error.message),
      );
    }
    return controller;
  }

  /**
   * Liveness and readiness. Ready means every informer has synced and its watch is not
   * failing; a standby waiting for the lease is ready (its caches are warm).
   */
  health(): ManagerHealth {
    const checks: HealthCheck[] = [
      {
        name: 'manager',
        ok: this.state === 'running' || (this.state === 'starting' && this.caches),
        detail:
          this.options.leaderElection && this.state === 'running'
            ? this.isLeader
              ? 'leading'
              : 'standby'
            : this.state,
      },
    ];
    // Alive but not ready while the API server cannot be reached: the gate holds reconciles.
    const outage = this.outage.state;
    checks.push({
      name: 'apiserver',
      ok: !outage.holding,
      ...(outage.holding
        ? {
            detail: `for ${((Date.now() - outage.since!) / 1000).toFixed(0)} s the API server ${outage.error ?? 'does not answer'}; reconciles held`,
          }
        : {}),
    });
    for (const controller of this.controllers.values()) {
      const { ok, detail } = controller.streamsLive;
      checks.push({ name: `controller:${controller.name}`, ok, ...(detail ? { detail } : {}) });
    }
    for (const informer of this.informers.all()) {
      const { stats } = informer;
      const ok = informer.synced && stats.failures === 0;
      checks.push({
        name: `informer:${resourceName(informer.resource)}`,
        ok,
        ...(ok
          ? {}
          : {
              detail: informer.synced
                ? `watch failing: ${stats.lastError ?? 'unknown error'}`
                : `not synced yet${stats.lastError ? `: ${stats.lastError}` : ''}`,
            }),
      });
    }
    return {
      live: this.state !== 'stopped' && this.state !== 'failed',
      ready: checks.every((c) => c.ok),
      checks,
    };
  }

  /**
   * Starts informers and waits for their sync; then, without leader election, starts the
   * controllers. With leader election it campaigns meanwhile and resolves once the caches
   * are synced: this replica leads, or is a ready standby that starts the controllers when
   * it takes the lead.
   */
  async start(): Promise<void> {
    if (this.state !== 'idle') throw new Error(`the manager was already started (state ${this.state})`);
    this.state = 'starting';
    this.outage.start();
    const controllers = [...this.controllers.values()];
    for (const controller of controllers) controller.prepare(this.informers);
    // Without sharding, the campaign runs while the caches sync, as controller-runtime's: a
    // process started after a crash waits out its predecessor's Lease (15 s by default,
    // counted from its first read of it) and lists at the same time, not one after the
    // other. It leads its controllers once both are done. (Sharded, the assigner needs the
    // caches: it campaigns after.)
    const early = !this.options.sharding;
    if (early) this.coordinate();
    try {
      await this.waitForSync(controllers.flatMap((c) => c.informers));
    } catch (error) {
      this.state = 'failed';
      this.outage.stop();
      // A Lease taken meanwhile is released: a standby that can sync takes over at once.
      if (early) await this.coordination.stop();
      throw error;
    }
    this.caches = true;
    if (this.abort.signal.aborted) return;
    this.state = 'running';
    if (!early) this.coordinate();
    else if (this.isLeader) this.lead();
  }

  /** Starts the Lease loops: the controllers run while this replica holds its Leases (and its caches are synced). */
  private coordinate(): void {
    this.coordination.start({
      led: () => {
        if (this.caches) this.lead();
      },
      lostLead: async (loss) => {
        await this.standBy([...this.started].filter((controller) => !this.sharded.has(controller)));
        if (loss.unreachable) {
          // Nobody else is known to hold it: a restart would only add a new identity's wait
          // for this one's record to expire. The campaign takes the Lease back when the server answers.
          this.log.warn(
            'the lease lapsed while the API server did not answer; reconciles stand by until this replica renews it',
          );
          return;
        }
        this.options.onLeadershipLost?.();
      },
      heldShard: () => {
        for (const controller of this.sharded) {
          if (controller.informers.every((i) => i.synced)) this.startController(controller);
        }
        this.log.info(
          `shard ${this.options.sharding?.shardId}: holding its Lease; ${this.sharded.size} sharded controller(s) running`,
        );
      },
      lostShard: () => this.standBy([...this.sharded]),
    });
  }

  /**
   * The shard label of a child the client writes, when its controller owner is a cached
   * object of a sharded controller that owns the child's kind (so, this shard's): the
   * child is born in its owner's shard. Undefined for anything else.
   */
  private childLabels(child: KubeObject, resource: ResourceDescriptor): Record<string, string> | undefined {
    const ref = child.metadata?.ownerReferences?.find((r) => r.controller === true);
    if (!ref) return undefined;
    for (const controller of this.sharded) {
      const owner = controller.ownerOf(ref, child.metadata?.namespace, resource);
      if (!owner) continue;
      const fresh = !controller.cachesChild(resource, child);
      return this.options.sharding!.childLabels(owner, fresh ? { resource, object: child } : undefined);
    }
    return undefined;
  }

  /**
   * The cached children of a sharded owner, of every kind a sharded controller of its kind
   * owns, except the kinds some sharded controller reconciles as its primary (those are
   * drained on their own).
   */
  private childrenOf(owner: ResourceDescriptor, object: KubeObject): ShardedChild[] {
    const name = resourceName(owner);
    const primaries = new Set<string>();
    for (const controller of this.sharded) primaries.add(resourceName(controller.resource!));
    const seen = new Set<string>();
    const children: ShardedChild[] = [];
    for (const controller of this.sharded) {
      if (resourceName(controller.resource!) !== name) continue;
      for (const child of controller.childrenOf(object)) {
        const kind = resourceName(child.resource);
        const id = `${kind}/${child.object.metadata?.namespace ?? ''}/${child.object.metadata?.name ?? ''}`;
        if (primaries.has(kind) || seen.has(id)) continue;
        seen.add(id);
        children.push(child);
      }
    }
    return children;
  }

  /** Whether a controller may run now: its shard's Lease is held, or this replica leads. */
  private mayRun(controller: ManagedController<KubeObject>): boolean {
    return this.sharded.has(controller) ? this.coordination.holdsShard : this.isLeader;
  }

  /** Aborts the running reconciles of these controllers at once; they start again with their lease. */
  private async standBy(controllers: ManagedController<KubeObject>[]): Promise<void> {
    const running = controllers.filter((controller) => this.started.has(controller));
    await Promise.all(running.map((controller) => controller.standBy()));
    for (const controller of running) this.started.delete(controller);
  }

  /** Starts every leader's controller whose caches are synced (the others start when theirs are). */
  private lead(): void {
    for (const controller of this.controllers.values()) {
      if (!this.sharded.has(controller) && controller.informers.every((i) => i.synced))
        this.startController(controller);
    }
    this.log.info(`manager started ${this.started.size} controller(s) with ${this.pool.concurrency} workers`);
  }

  private startController(controller: ManagedController<KubeObject>): void {
    if (this.started.has(controller)) return;
    this.started.add(controller);
    controller.start(this.pool);
  }

  /** Stops intake, drains running reconciles within the grace period, releases the lease. */
  async stop(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'stopping') return;
    this.state = 'stopping';
    this.abort.abort();
    this.coordination.halt();
    const drained = await this.stopControllers();
    // Events still pending are written while this replica still holds the lease.
    if (!(await this.events.close(this.options.eventFlushMs ?? 5_000)))
      this.log.warn('some Events were still unwritten when the flush bound ran out; they are dropped');
    // The Leases last: the reconciles and the Events above were written while they were held.
    await this.coordination.stop();
    this.informers.stopAll();
    this.outage.stop();
    this.state = 'stopped';
    this.log.info(`manager stopped${drained ? '' : ' (some reconciles were aborted after the grace period)'}`);
  }

  private async stopControllers(): Promise<boolean> {
    const results = await Promise.all([...this.controllers.values()].map((c) => c.stop(this.shutdownGraceMs)));
    return results.every(Boolean);
  }

  private async waitForSync(informers: Informer<KubeObject>[]): Promise<void> {
    const pending = [...new Set(informers)];
    // A timer that keeps the process alive (AbortSignal.timeout's does not): while the API
    // server is down nothing else is pending, and Node would end a process still starting.
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new Error(`no sync within ${this.syncTimeoutMs} ms`)),
      this.syncTimeoutMs,
    );
    const signal = AbortSignal.any([timeout.signal, this.abort.signal]);
    try {
      await Promise.all(pending.map((informer) => informer.whenSynced(signal)));
    } catch (error) {
      if (this.abort.signal.aborted) return;
      const stuck = pending.filter((i) => !i.synced);
      const detail = stuck
        .map((i) => `${resourceName(i.resource)}${i.stats.lastError ? `: ${i.stats.lastError}` : ''}`)
        .join('; ');
      throw new Error(
        `caches did not sync within ${this.syncTimeoutMs} ms: ${detail || (error as Error).message}. ` +
          `Check that the API server is reachable, the CRDs are installed and the operator's RBAC allows list and watch.`,
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  }
}
