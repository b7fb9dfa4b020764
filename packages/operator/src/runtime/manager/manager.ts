import {
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  DEFAULT_CONCURRENCY,
  DEFAULT_SHUTDOWN_GRACE_MS,
  type KubeObject,
  type ResourceDescriptor,
  type RuntimeLogger,
  silentLogger,
  type Transport,
} from '@nestor/core';
import type { EventRecorder, EventRecorderMetrics } from '../../client/event-recorder.js';
import type { KubeClient } from '../../client/kube-client.js';
import { Cluster } from './cluster.js';
import { allReady, type HealthCheck, type ManagerHealth } from './health.js';
import { LeaseLoops, type LeaderElection } from './lease-loops.js';
import { LeaderTasks, type LeaderTask, type Leading } from './leader-tasks.js';
import { ManagedController, type ManagedControllerOptions } from '../controller/managed-controller.js';
import { controllerKinds } from '../controller/controller-options.js';
import { selectsLocal } from '../controller/cluster-selection.js';
import type { Informer } from '../cache/informer.js';
import type { InformerCache } from '../cache/informer-cache.js';
import type { WorkQueue } from '../queue/queue.js';
import { ShardedControllers } from './sharded-controllers.js';
import { withMemberWatches } from './member-sources.js';
import { HeapRelease } from './heap-release.js';
import { positiveDuration, positiveInteger } from '../options-check.js';
import type { OutageGate } from './outage-gate.js';
import { WorkerPool } from '../controller/worker-pool.js';
import type { LeaseFence } from '../leases/lease-fence.js';
import type { ShardingHooks } from '../controller/sharding-hooks.js';

import type { ClusterFleet, ManagerMetrics, ManagerOptions } from './manager-options.js';

export type {
  ClusterFleet,
  EventRecorderMetrics,
  HealthCheck,
  LeaderElection,
  LeaderTask,
  Leading,
  ManagerHealth,
  ManagerMetrics,
  ManagerOptions,
};

type State = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/**
 * Owns the worker pool, the cluster (its informer cache, client, Event recorder and outage
 * gate), the Leases and the controllers. Start order: informers syncing (bounded wait) and
 * the Lease loops (LeaseLoops) at once -> controllers once both are done (sharded: the
 * Lease loops after the sync). Stop order reverse, with a drain grace period.
 */
export class Manager {
  readonly pool: WorkerPool;
  /** The API server the controllers run on: transport, informers, client, recorder, outage gate. */
  readonly cluster: Cluster;
  /** The leader and shard Lease loops, and the write fence they make. */
  private readonly leases: LeaseLoops;
  private readonly leaderTasks: LeaderTasks;
  private readonly controllers = new Map<string, ManagedController<KubeObject>>();
  private readonly started = new Set<ManagedController<KubeObject>>();
  /** Controllers that run on this shard's objects (sharding only); the others run on the leader. */
  private readonly sharded: ShardedControllers | undefined;
  private readonly log: RuntimeLogger;
  private readonly syncTimeoutMs: number;
  /** How long running reconciles may take to finish on stop (and a member cluster's on disengage). */
  readonly shutdownGraceMs: number;
  private fleet?: ClusterFleet;
  private state: State = 'idle';
  private readonly abort = new AbortController();
  /** Caches synced: a standby waiting for the lease is ready. */
  private caches = false;
  private readonly heapRelease: HeapRelease | undefined;

  constructor(private readonly options: ManagerOptions) {
    this.log = options.logger ?? silentLogger;
    this.leases = new LeaseLoops({
      ...(options.leaderElection ? { leaderElection: options.leaderElection } : {}),
      ...(options.sharding ? { sharding: options.sharding } : {}),
      runsOnLeader: (name) => {
        const controller = this.controllers.get(name);
        return controller !== undefined && !this.sharded?.has(controller);
      },
      logger: this.log,
    });
    this.leaderTasks = new LeaderTasks(this.log);
    this.pool = new WorkerPool({
      concurrency: positiveInteger(options.concurrency ?? DEFAULT_CONCURRENCY, "the manager's concurrency"),
    });
    const fence = this.leases.fence;
    const sharded = options.sharding ? new ShardedControllers(options.sharding) : undefined;
    this.sharded = sharded;
    const { events, fieldManager, informers, kinds, cache, metrics, clusterName } = options;
    this.cluster = new Cluster({
      transport: options.transport,
      hold: this.pool,
      logger: this.log,
      ...(clusterName ? { name: clusterName } : {}),
      ...(informers ? { informers } : {}),
      ...(cache ? { cache } : {}),
      ...(events ? { events } : {}),
      ...(fieldManager ? { fieldManager } : {}),
      ...(kinds ? { kinds } : {}),
      ...(metrics ? { metrics } : {}),
      ...(fence.fences ? { fence } : {}),
      ...(sharded
        ? { childLabels: (object: KubeObject, resource: ResourceDescriptor) => sharded.childLabels(object, resource) }
        : {}),
    });
    this.syncTimeoutMs = positiveDuration(
      options.syncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS,
      'the cache sync timeout',
    );
    this.shutdownGraceMs = positiveDuration(
      options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS,
      'the shutdown grace period',
    );
    if (options.heapRelease !== false) this.heapRelease = new HeapRelease(options.heapRelease, this.log);
  }

  /** @internal Built-in sharding's hooks, when the manager is sharded (the fleet spreads its members by them). */
  get sharding(): ShardingHooks | undefined {
    return this.options.sharding;
  }

  /** Where the controllers report metrics, if anywhere. */
  get metrics(): ManagerMetrics | undefined {
    return this.options.metrics;
  }

  /**
   * Runs the controllers whose `clusters` select clusters besides this one in `fleet` (one
   * per manager, attached before start: the Fleet's constructor does it).
   */
  attachFleet(fleet: ClusterFleet): void {
    if (this.fleet) throw new Error('the manager has a fleet already: one Fleet per manager');
    if (this.state !== 'idle') throw new Error(`attach the fleet before the manager starts (state ${this.state})`);
    this.fleet = fleet;
  }

  get transport(): Transport {
    return this.cluster.transport;
  }

  /** The cluster's informer cache. */
  get informers(): InformerCache {
    return this.cluster.informers;
  }

  /** Holds dispatch while the API server does not answer. */
  get outage(): OutageGate {
    return this.cluster.outage;
  }

  /** Records Events best effort (see EventRecorder); flushed on stop. */
  get events(): EventRecorder {
    return this.cluster.events;
  }

  /**
   * The client of this manager's controllers (controller-runtime's mgr.GetClient()): reads
   * from its informers, writes fenced by whichever of its Leases applies, Events to its
   * recorder. Each reconcile gets it scoped to its controller and signal as `request.client`;
   * used as is, it reads both from the ambient context.
   */
  get client(): KubeClient {
    return this.cluster.client;
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
    const fence = this.leases.fence;
    return fence.fences ? fence : undefined;
  }

  /** True once this process leads (always, without leader election). */
  get isLeader(): boolean {
    return this.leases.isLeader;
  }

  /** Objects the sharded controllers cache: this shard's share of their kinds and children (0 unsharded). */
  get shardedObjects(): number {
    return this.sharded?.objects ?? 0;
  }

  /** Of these, the children (objects of the sharded controllers' owned kinds). */
  get shardedChildren(): number {
    return this.sharded?.children ?? 0;
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
   * starts as soon as its caches are synced. With `clusters` selecting other clusters, the
   * fleet runs an instance in each of them; the one in this cluster (if selected) is returned.
   */
  addController<T extends KubeObject>(
    options: ManagedControllerOptions<T> & { clusters?: 'local' | 'all' },
  ): ManagedController<T>;
  addController<T extends KubeObject>(options: ManagedControllerOptions<T>): ManagedController<T> | undefined;
  addController<T extends KubeObject>(options: ManagedControllerOptions<T>): ManagedController<T> | undefined {
    // Their objects' apiVersion and kind name their REST paths in every cluster's client (one registry).
    for (const kind of controllerKinds(options as unknown as ManagedControllerOptions<KubeObject>))
      this.client.kinds.register(kind);
    const clusters = options.clusters ?? 'local';
    if (clusters !== 'local') {
      if (!this.fleet) {
        throw new Error(
          `controller ${options.name} runs in clusters ${typeof clusters === 'string' ? `'${clusters}'` : 'a function picks'}, ` +
            'but the manager has no fleet: make one (new Fleet(manager, { providers })) before adding it',
        );
      }
      this.fleet.addController(options as unknown as ManagedControllerOptions<KubeObject>);
      if (!selectsLocal(clusters, this.cluster.name)) return undefined;
    }
    options = withMemberWatches(options, this.fleet, this.cluster.name);
    if (this.controllers.has(options.name)) {
      throw new Error(`a controller named "${options.name}" is already registered: give each controller a unique name`);
    }
    if (this.state === 'stopping' || this.state === 'stopped')
      throw new Error(`cannot add controller ${options.name}: the manager is stopping`);
    const metrics = this.options.metrics;
    const sharded = this.sharded?.shards(options) ? this.sharded : undefined;
    const controller = new ManagedController<T>({
      logger: this.log,
      outageHold: true,
      events: this.events,
      client: this.client,
      echoes: this.cluster.echoes,
      ...(metrics ? { metrics: metrics.controllerSink(options.name, options.maxConcurrentReconciles ?? 1) } : {}),
      ...options,
      ...sharded?.narrow(options),
    });
    const managed = controller as unknown as ManagedController<KubeObject>;
    sharded?.add(controller, options);
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
   * Runs `task` on the leader beside its controllers: started each time this replica takes
   * the lead (at once without leader election), aborted and waited for when it loses it or
   * the manager stops. Its writes should ask `leading.assertLeading()` first.
   */
  addLeaderTask(task: LeaderTask): void {
    this.leaderTasks.add(task);
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
    const [apiserver, ...informers] = this.cluster.health();
    checks.push(apiserver!);
    for (const controller of this.controllers.values()) {
      const { ok, detail } = controller.streamsLive;
      checks.push({ name: `controller:${controller.name}`, ok, ...(detail ? { detail } : {}) });
    }
    checks.push(...informers);
    if (this.fleet) checks.push(...this.fleet.health());
    return {
      live: this.state !== 'stopped' && this.state !== 'failed',
      ready: allReady(checks),
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
    this.cluster.start();
    this.heapRelease?.start();
    const controllers = [...this.controllers.values()];
    for (const controller of controllers) controller.prepare(this.informers);
    // Without sharding, the campaign runs while the caches sync, as controller-runtime's: a
    // process started after a crash waits out its predecessor's Lease (15 s by default) while
    // it lists, and leads once both are done. (Sharded, the assigner needs the caches: after.)
    const early = !this.options.sharding;
    if (early) this.coordinate();
    try {
      await this.waitForSync(controllers.flatMap((c) => c.informers));
    } catch (error) {
      this.state = 'failed';
      this.cluster.outage.stop();
      // A Lease taken meanwhile is released: a standby that can sync takes over at once.
      if (early) await this.leases.stop();
      throw error;
    }
    this.caches = true;
    if (this.abort.signal.aborted) return;
    this.state = 'running';
    this.fleet?.start();
    if (!early) this.coordinate();
    else if (this.isLeader) this.lead();
  }

  /** Starts the Lease loops: the controllers run while this replica holds its Leases (and its caches are synced). */
  private coordinate(): void {
    this.leases.start({
      led: () => {
        if (this.caches) this.lead();
      },
      lostLead: async (loss) => {
        await Promise.all([
          this.standBy([...this.started].filter((controller) => !this.sharded?.has(controller))),
          this.fleet?.standBy(),
          this.leaderTasks.standBy(),
        ]);
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
        for (const controller of this.sharded ?? []) {
          if (controller.informers.every((i) => i.synced)) this.startController(controller);
        }
        this.log.info(
          `shard ${this.sharded?.shardId}: holding its Lease; ${this.sharded?.size ?? 0} sharded controller(s) running`,
        );
      },
      lostShard: () => this.standBy([...(this.sharded ?? [])]),
    });
  }

  /** Whether a controller may run now: its shard's Lease is held, or this replica leads. */
  private mayRun(controller: ManagedController<KubeObject>): boolean {
    return this.sharded?.has(controller) ? this.leases.holdsShard : this.isLeader;
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
      if (!this.sharded?.has(controller) && controller.informers.every((i) => i.synced))
        this.startController(controller);
    }
    this.fleet?.lead();
    this.leaderTasks.lead(() => this.leases.fence.leading?.assertWritable());
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
    this.heapRelease?.stop();
    this.leases.halt();
    const [drained] = await Promise.all([this.stopControllers(), this.leaderTasks.standBy()]);
    // Events still pending are written while this replica still holds the lease.
    if (!(await this.cluster.flushEvents(this.options.eventFlushMs ?? 5_000)))
      this.log.warn('some Events were still unwritten when the flush bound ran out; they are dropped');
    // The Leases last: the reconciles and the Events above were written while they were held.
    await this.leases.stop();
    this.cluster.stop();
    this.state = 'stopped';
    this.log.info(`manager stopped${drained ? '' : ' (some reconciles were aborted after the grace period)'}`);
  }

  private async stopControllers(): Promise<boolean> {
    const results = await Promise.all([
      ...[...this.controllers.values()].map((c) => c.stop(this.shutdownGraceMs)),
      ...(this.fleet ? [this.fleet.stop(this.shutdownGraceMs)] : []),
    ]);
    return results.every(Boolean);
  }

  private waitForSync(informers: Informer<KubeObject>[]): Promise<void> {
    return this.cluster.waitForSync(informers, { timeoutMs: this.syncTimeoutMs, signal: this.abort.signal });
  }
}
