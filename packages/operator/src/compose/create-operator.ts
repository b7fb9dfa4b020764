// Everything one operator process is made of, built in one place from its options: the
// cluster and the manager, the Leases, sharding, the metrics and probes server, the webhook
// server, their metrics, and the exit on a lost lease. `OperatorModule` is providers over
// it, as controller-runtime's manager.New builds the lock, the servers and the probes itself.
import { hostname } from 'node:os';
import {
  consoleLogger,
  loadKubeConfig,
  resourceName,
  type KubeConfigSource,
  type RuntimeLogger,
  Transport,
} from '@nestor/core';
import type { EventRecorder } from '../client/event-recorder.js';
import type { KubeClient } from '../client/kube-client.js';
import { readOperatorFlags, withOperatorFlags } from '../config/operator-flags.js';
import { ownNamespace } from '../runtime/own-namespace.js';
import { OperatorMetrics } from '../metrics/operator-metrics.js';
import type { Cluster } from '../runtime/manager/cluster.js';
import { InformerCache } from '../runtime/cache/informer-cache.js';
import { LeaseLock } from '../runtime/leases/leader-election.js';
import { leaseTiming } from '../runtime/leases/lease-timing.js';
import { Manager } from '../runtime/manager/manager.js';
import { Fleet } from '../runtime/fleet/fleet.js';
import { MetricsAndProbesServer } from '../serving/metrics-and-probes-server.js';
import { WebhookHttpsServer } from '../serving/webhook-https-server.js';
import type { ShardCoordinator } from '../sharding/shard-coordinator.js';
import { cacheSettings } from './cache-settings.js';
import { storageMigrationTask } from './storage-migration-task.js';
import type { OperatorOptions } from './operator-options.js';

export interface CreateOperatorOptions extends OperatorOptions {
  /** Where each part logs, by context ('Operator', 'Informer', 'LeaderElection', ...); default the console. */
  logger?: (context: string) => RuntimeLogger;
  /**
   * What a lost lease does with `leaderElection.onLost: 'exit'` (the default), once the
   * running reconciles were aborted: default `process.exit(1)`, as controller-runtime.
   */
  exit?: (code: number) => void;
}

/** One operator: its cluster, manager, metrics and servers, started and stopped in order. */
export interface Operator {
  /** The options as used: what was given, filled from the flags and environment unless `readFlags: false`. */
  readonly options: OperatorOptions;
  readonly kubeConfig: KubeConfigSource;
  /** The API server the controllers run on: transport, informers, client, Event recorder, outage gate. */
  readonly cluster: Cluster;
  /** Add controllers here (`manager.addController`) before start(). */
  readonly manager: Manager;
  /** The member clusters besides `cluster` (none without `options.fleet`), and `cluster` itself by its name. */
  readonly fleet: Fleet;
  /** The cluster's client, fenced by the manager's Leases: `manager.client`. */
  readonly client: KubeClient;
  readonly events: EventRecorder;
  readonly metrics: OperatorMetrics;
  /** /metrics, /healthz and /readyz. */
  readonly http: MetricsAndProbesServer;
  /** Add admission and conversion routes here before start(); it listens only when it has one. */
  readonly webhooks: WebhookHttpsServer;
  /**
   * Listens (probes and metrics, then webhooks, so both answer during the cache sync), then
   * starts the manager: resolves once the caches synced (and, with leader election, this
   * replica leads or is a ready standby).
   */
  start(): Promise<void>;
  /** Stops the manager (drain, Events, Leases), then the servers, then closes the transport. */
  stop(): Promise<void>;
}

/**
 * Builds an operator from `options`, as `OperatorModule.forRoot` does, without Nest:
 *
 * ```ts
 * const operator = await createOperator({ leaderElection: { id: 'widgets' } });
 * operator.manager.addController({ name: 'widget', resource: WIDGETS, reconcile });
 * await operator.start();
 * process.once('SIGTERM', () => void operator.stop());
 * ```
 */
export async function createOperator(given: CreateOperatorOptions = {}): Promise<Operator> {
  const { logger = () => consoleLogger, exit = (code: number) => process.exit(code), ...rest } = given;
  const options: OperatorOptions = rest.readFlags === false ? rest : withOperatorFlags(rest, readOperatorFlags());
  const kubeConfig = loadKubeConfig(options.kubeConfig);
  const transport = await Transport.fromKubeConfig(kubeConfig, options.transport);
  const metrics = new OperatorMetrics();
  // Loaded only when asked for: an unsharded operator holds none of sharding/'s code.
  const sharding = options.sharding ? (await import('../sharding/shard-coordinator.js')).ShardCoordinator : undefined;
  const manager = createManager(transport, metrics, options, logger, exit, sharding);
  const migrations = storageMigrationTask(transport, manager, metrics, options, logger);
  if (migrations) manager.addLeaderTask(migrations);
  // The operator's namespace, for providers given none: OperatorModule's namespace outside a pod.
  const fleet = new Fleet(manager, {
    providers: [],
    operatorNamespace: ownNamespace(options.namespace),
    ...options.fleet,
    logger: logger('Fleet'),
  });
  metrics.trackFleet(() => fleet.status());
  metrics.trackWatches(() =>
    fleet.informers().map(({ cluster, informer: i }) => ({
      cluster,
      resource: resourceName(i.resource),
      stats: i.stats,
      mode: i.mode,
      objects: i.size,
    })),
  );
  const webhooks = createWebhookServer(manager, metrics, options, logger);
  const http = new MetricsAndProbesServer({
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.health ? { health: options.health } : {}),
    manager,
    registry: metrics,
    transport,
    readiness: [webhooks],
    logger,
  });
  return {
    options,
    kubeConfig,
    cluster: manager.cluster,
    manager,
    fleet,
    client: manager.client,
    events: manager.events,
    metrics,
    http,
    webhooks,
    async start() {
      await http.start();
      await webhooks.start();
      await manager.start();
    },
    async stop() {
      await manager.stop();
      await webhooks.stop();
      await http.stop();
      transport.close();
    },
  };
}

/** The manager over `transport`: its cache, Leases, sharding, metrics and exit policy. */
export function createManager(
  transport: Transport,
  metrics: OperatorMetrics,
  options: OperatorOptions,
  logger: (context: string) => RuntimeLogger,
  exit: (code: number) => void,
  /** sharding/'s ShardCoordinator, loaded by the caller when `options.sharding` asks for it. */
  coordinator?: typeof ShardCoordinator,
): Manager {
  const election = options.leaderElection;
  const log = logger('Operator');
  const lock = election
    ? new LeaseLock(transport, {
        name: election.id,
        namespace: leaseNamespace(options),
        logger: logger('LeaderElection'),
        onLeadershipChange: (leading) => metrics.setLeader(election.id, leading),
        ...(election.identity ? { identity: election.identity } : {}),
        ...leaseTiming(election),
      })
    : undefined;
  if (election) metrics.setLeader(election.id, false);
  const { defaults, byResource, keeps } = cacheSettings(options.cache);
  // Made here, not by the manager's cluster: the shard coordinator watches through it too.
  const informers = new InformerCache(transport, { logger: logger('Informer'), ...defaults }, byResource, keeps);
  const sharding = coordinator && shardCoordinator(coordinator, transport, informers, metrics, options, logger);
  const manager = new Manager({
    transport,
    informers,
    metrics,
    // The manager makes the recorder and the client, both fenced by its Leases.
    events: { logger: logger('Events') },
    ...(options.fieldManager ? { fieldManager: options.fieldManager } : {}),
    logger: log,
    ...(lock ? { leaderElection: lock } : {}),
    ...(sharding ? { sharding } : {}),
    onLeadershipLost: () => {
      if (election?.onLost === 'stop') return; // the manager stands by and campaigns again
      log.error(
        'exiting: this replica lost the lease; its reconciles were aborted (set leaderElection.onLost to "stop" to stand by and campaign again instead)',
      );
      exit(1);
    },
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    ...(options.cacheSyncTimeoutMs ? { syncTimeoutMs: options.cacheSyncTimeoutMs } : {}),
    ...(options.shutdownGraceMs ? { shutdownGraceMs: options.shutdownGraceMs } : {}),
    ...(options.heapRelease !== undefined ? { heapRelease: options.heapRelease } : {}),
  });
  metrics.trackThrottling(() => transport.throttledResources);
  metrics.trackWatches(() =>
    informers.all().map((i) => ({ resource: resourceName(i.resource), stats: i.stats, mode: i.mode, objects: i.size })),
  );
  sharding?.countObjects(() => manager.shardedObjects);
  return manager;
}

/** The webhook server: routes are added by the caller (the Nest layer: the `@Webhook` classes) before it starts. */
function createWebhookServer(
  manager: Manager,
  metrics: OperatorMetrics,
  options: OperatorOptions,
  logger: (context: string) => RuntimeLogger,
): WebhookHttpsServer {
  // The webhook metrics are registered on first use: an operator without webhooks exports none.
  let sink: ReturnType<OperatorMetrics['webhookSink']> | undefined;
  const webhookMetrics = () => (sink ??= metrics.webhookSink());
  return new WebhookHttpsServer({
    ...options.webhooks,
    transport: manager.transport,
    namespace: () => ownNamespace(options.namespace),
    events: { record: (...args) => manager.events.record(...args) },
    logger,
    metrics: {
      started: (webhook) => webhookMetrics().started(webhook),
      finished: (webhook, code, seconds) => webhookMetrics().finished(webhook, code, seconds),
      denied: (webhook, code) => webhookMetrics().denied(webhook, code),
      serving: (webhooks) => webhookMetrics().serving(webhooks),
    },
  });
}

/** Where the Lease lives when the options name no namespace. */
function leaseNamespace(options: OperatorOptions): string {
  return options.leaderElection?.namespace ?? ownNamespace(options.namespace);
}

/** The shard coordinator `sharding` asks for, or undefined. */
function shardCoordinator(
  Coordinator: typeof ShardCoordinator,
  transport: Transport,
  informers: InformerCache,
  metrics: OperatorMetrics,
  options: OperatorOptions,
  logger: (context: string) => RuntimeLogger,
): ShardCoordinator | undefined {
  if (!options.sharding) return undefined;
  const election = options.leaderElection;
  if (!election) {
    throw new Error(
      'sharding needs leaderElection (the elected leader assigns objects to shards): set leaderElection: { id } as well',
    );
  }
  const sharding = options.sharding === true ? {} : options.sharding;
  const shardId = (sharding.shardId ?? process.env['POD_NAME'] ?? hostname()).toLowerCase();
  const ring = sharding.ring ?? election.id;
  return new Coordinator(transport, informers, {
    ring,
    metrics: metrics.shardingSink(ring, shardId),
    shardId,
    namespace: leaseNamespace(options),
    ...leaseTiming(sharding, election),
    ...(sharding.tokensPerShard ? { tokensPerShard: sharding.tokensPerShard } : {}),
    ...(sharding.resyncMs ? { resyncMs: sharding.resyncMs } : {}),
    logger: logger('Sharding'),
  });
}
