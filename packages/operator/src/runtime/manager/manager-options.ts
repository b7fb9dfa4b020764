// What a Manager is given: its transport and limits, its cache, Leases, sharding, metrics
// and Event recorder; and the fleet seam, through which controllers run in other clusters.
import type { ClientReads } from '../../client/client-reads.js';
export type { ClientReads, ReadSource } from '../../client/client-reads.js';
import type { KubeObject, RuntimeLogger, Transport } from '@nestor/core';
import type { EventRecorder, EventRecorderMetrics, EventRecorderOptions } from '../../client/event-recorder.js';
import type { KindRegistry } from '../../client/kind-registry.js';
import type { InformerCache } from '../cache/informer-cache.js';
import type { InformerOptions } from '../cache/informer.js';
import type { ManagedControllerOptions } from '../controller/controller-options.js';
import type { ExternalSource, WatchSource } from '../controller/event-sources.js';
import type { ControllerMetricsSink } from '../controller/reconcile-loop.js';
import type { ShardingHooks } from '../controller/sharding-hooks.js';
import type { WorkQueue } from '../queue/queue.js';
import type { HealthCheck } from './health.js';
import type { HeapReleaseOptions } from './heap-release.js';
import type { LeaderElection } from './lease-loops.js';
import type { OutageMetrics } from './outage-gate.js';

/** Where controllers report metrics (OperatorMetrics binds this to Prometheus). */
export interface ManagerMetrics {
  controllerSink(controller: string, maxConcurrentReconciles: number): ControllerMetricsSink;
  trackQueue(controller: string, queue: WorkQueue<string>): void;
  /** Forgets a controller's queue: it stopped for good (a member cluster disengaged), and nothing may keep it. */
  untrackQueue?(controller: string): void;
  /** Where the manager's Event recorder reports written and dropped Events. */
  eventSink?(): EventRecorderMetrics;
  /** Where the outage gate reports outages of the API server. */
  outageSink?(): OutageMetrics;
  /** Where the cluster's client reports whether the cache or the API server served each read. */
  readSink?(): ClientReads;
}

export interface ManagerOptions {
  transport: Transport;
  /** Reconciles running at once across all controllers (default 16). */
  concurrency?: number;
  /** Bound on the wait for the caches' first sync (default 2 min, as controller-runtime). */
  syncTimeoutMs?: number;
  /** How long running reconciles may take to finish on stop (default 30 s). */
  shutdownGraceMs?: number;
  /** Names the manager's cluster in logs and health checks (default 'default'). */
  clusterName?: string;
  /** Informer cache to share (default: one of the manager's own on the transport, with `cache`'s options). */
  informers?: InformerCache;
  /** Options of every informer of the manager's own cache, and per resource (by `resourceName()`). */
  cache?: { defaults?: InformerOptions; byResource?: ReadonlyMap<string, InformerOptions> };
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
  sharding?: ShardingHooks;
  /**
   * Returns to the OS what start-up, a LIST or a burst grew, once the process is idle
   * (HeapRelease; needs `node --expose-gc`, as the generated Deployment runs). `false`: never.
   */
  heapRelease?: HeapReleaseOptions | false;
  logger?: RuntimeLogger;
}

/**
 * What runs controllers in clusters besides the manager's own (runtime/fleet's Fleet): the
 * manager hands it the controllers whose `clusters` select other clusters, its leadership,
 * its start and its stop, and reports its health.
 */
export interface ClusterFleet {
  addController(options: ManagedControllerOptions<KubeObject>): void;
  /** A watch of member clusters, as a source of requests of a controller in the manager's cluster. */
  watch(source: WatchSource<KubeObject>): ExternalSource;
  /** The manager's caches synced: clusters may be engaged. */
  start(): void;
  lead(): void;
  standBy(): Promise<void>;
  stop(graceMs: number): Promise<boolean>;
  health(): HealthCheck[];
}
