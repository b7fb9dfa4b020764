import type { Registry } from 'prom-client';
import { collectDefaultMetrics, prom } from './prom-client.js';
import type { EventRecorderMetrics } from '../runtime/manager/manager.js';
import type { OutageMetrics } from '../runtime/manager/outage-gate.js';
import type { ControllerMetricsSink } from '../runtime/controller/reconcile-loop.js';
import type { WorkQueue } from '../runtime/queue/queue.js';
import type { ShardingMetrics } from '../runtime/controller/sharding-hooks.js';
import type { StorageMigrationMetrics } from '../upgrades/storage-migrations.js';
import { ApiServerMetrics } from './apiserver-metrics.js';
import { ClientReadMetrics } from './client-read-metrics.js';
import type { ClientReads } from '../runtime/manager/manager-options.js';
import { ControllerMetrics } from './controller-metrics.js';
import { EventMetrics } from './event-metrics.js';
import { FleetMetrics } from './fleet-metrics.js';
import type { MemberStatus } from '../runtime/fleet/fleet.js';
import { LeaderMetrics } from './leader-metrics.js';
import { migrationMetrics } from './migration-metrics.js';
import { shardingMetrics } from './sharding-metrics.js';
import { WatchMetrics, type WatchStatsSource } from './watch-metrics.js';
import { WebhookMetrics } from './webhook-metrics.js';

/**
 * Prometheus metrics under controller-runtime's and client-go's names and labels, so the
 * dashboards and alerts people run for Go operators work unchanged; plus Nestor's own
 * for watches.
 */
export class OperatorMetrics {
  readonly registry: Registry;
  private readonly controllers: ControllerMetrics;
  private readonly events: EventMetrics;
  private readonly apiServer: ApiServerMetrics;
  private readonly webhooks: WebhookMetrics;
  private readonly leader: LeaderMetrics;
  private readonly watches: WatchMetrics;
  private readonly fleet: FleetMetrics;
  private readonly reads: ClientReadMetrics;
  private migrations?: StorageMigrationMetrics;

  constructor(options: { registry?: Registry; defaultMetrics?: boolean } = {}) {
    this.registry = options.registry ?? new prom.Registry();
    if (options.defaultMetrics ?? true) collectDefaultMetrics(this.registry);
    // In this order: the exposition lists the metrics as they were registered.
    this.controllers = new ControllerMetrics(this.registry);
    this.events = new EventMetrics(this.registry);
    this.apiServer = new ApiServerMetrics(this.registry);
    this.webhooks = new WebhookMetrics(this.registry);
    this.leader = new LeaderMetrics(this.registry);
    this.watches = new WatchMetrics(this.registry);
    this.fleet = new FleetMetrics(this.registry);
    this.reads = new ClientReadMetrics(this.registry);
  }

  /** The sink a controller reports to; its queue's gauges are read from `queue` when scraped. */
  controllerSink(controller: string, maxConcurrentReconciles: number): ControllerMetricsSink {
    return this.controllers.sink(controller, maxConcurrentReconciles);
  }

  /** The sink of the Event recorder: Events written and dropped. */
  eventSink(): EventRecorderMetrics {
    return this.events.sink();
  }

  /** The sink of the outage gate: whether reconciles are held for want of an API server. */
  outageSink(): OutageMetrics {
    return this.apiServer.outageSink();
  }

  /** The sink of the client: each read, and whether the cache or the API server served it. */
  readSink(): ClientReads {
    return this.reads;
  }

  /** The sink of the webhook server: requests per path (`webhook`), their latency and status, denials. */
  webhookSink() {
    return this.webhooks.sink();
  }

  /** Reads a controller's queue for the unfinished-work gauges. */
  trackQueue(controller: string, queue: WorkQueue<string>): void {
    this.controllers.trackQueue(controller, queue);
  }

  /** Stops reading a controller's queue (its controller stopped for good: a member cluster disengaged). */
  untrackQueue(controller: string): void {
    this.controllers.untrackQueue(controller);
  }

  /** Reads, when scraped, the resources the API server throttles (Transport.throttledResources). */
  trackThrottling(read: () => readonly string[]): void {
    this.apiServer.trackThrottling(read);
  }

  /** Reads watch health when scraped. */
  trackWatches(source: () => WatchStatsSource[]): void {
    this.watches.track(source);
  }

  /** Reads the fleet's member clusters when scraped. */
  trackFleet(source: () => readonly MemberStatus[]): void {
    this.fleet.track(source);
  }

  /** The sink of one shard of a ring: moves and passes (on the leader), hand-overs and cached objects (on each shard). */
  shardingSink(ring: string, shard: string): ShardingMetrics {
    return shardingMetrics(this.registry, ring, shard);
  }

  /**
   * The sink of the leader's storage-version migrations: objects visited and left, runs by
   * outcome. Registered on first use: an operator that never migrates exports none.
   * @internal createOperator hands it to the migration; its type lives in `upgrades/`.
   */
  migrationSink(): StorageMigrationMetrics {
    return (this.migrations ??= migrationMetrics(this.registry));
  }

  setLeader(name: string, leading: boolean): void {
    this.leader.set(name, leading);
  }

  /** The text exposition format, for GET /metrics. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
