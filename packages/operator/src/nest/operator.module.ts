import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { EventRecorder } from '../client/event-recorder.js';
import { KubeClient } from '../client/kube-client.js';
import { type KubeConfigSource, loadKubeConfig, resourceName, Transport } from '@nestor/core';
import { InformerCache } from '../runtime/informer-cache.js';
import { LeaseLock } from '../runtime/leader-election.js';
import { leaseTiming } from '../runtime/lease-timing.js';
import { Manager } from '../runtime/manager.js';
import { ShardCoordinator } from '../sharding/shard-coordinator.js';
import { hostname } from 'node:os';
import { OperatorMetrics } from '../metrics/operator-metrics.js';
import { cacheSettings } from './cache-settings.js';
import { OperatorHttpServer } from './operator-http.server.js';
import { runtimeLogger } from './nest-logger.js';
import { KUBE_CONFIG } from './operator.constants.js';
import { OperatorExplorer } from './operator.explorer.js';
import { OperatorLifecycle } from './operator.lifecycle.js';
import { readOperatorFlags, withOperatorFlags } from '../config/operator-flags.js';
import {
  ConfigurableOperatorModule,
  GIVEN_OPERATOR_OPTIONS,
  OPERATOR_MODULE_OPTIONS,
  type OPERATOR_OPTIONS_TYPE,
} from './operator.module-definition.js';
import type { OperatorModuleOptions } from './interfaces/operator-options.interface.js';
import { OperatorRegistry } from './operator.registry.js';
import { ownNamespace } from '../config/own-namespace.js';
import { WebhookExplorer } from './webhook.explorer.js';
import { WebhookServer } from './webhook.server.js';

/** Where the Lease lives when the options name no namespace. */
function leaseNamespace(options: OperatorModuleOptions): string {
  return options.leaderElection?.namespace ?? ownNamespace(options.namespace);
}

function createManager(
  transport: Transport,
  informers: InformerCache,
  metrics: OperatorMetrics,
  options: OperatorModuleOptions,
): Manager {
  const election = options.leaderElection;
  const log = runtimeLogger('Operator');
  const lock = election
    ? new LeaseLock(transport, {
        name: election.id,
        namespace: leaseNamespace(options),
        logger: runtimeLogger('LeaderElection'),
        onLeadershipChange: (leading) => metrics.setLeader(election.id, leading),
        ...(election.identity ? { identity: election.identity } : {}),
        ...leaseTiming(election),
      })
    : undefined;
  if (election) metrics.setLeader(election.id, false);
  const sharding = shardCoordinator(transport, informers, metrics, options);
  metrics.trackThrottling(() => transport.throttledResources);
  metrics.trackWatches(() => informers.all().map((i) => ({ resource: resourceName(i.resource), stats: i.stats })));
  const manager = new Manager({
    transport,
    informers,
    metrics,
    // The manager makes the recorder and the client, both fenced by its Leases.
    events: { logger: runtimeLogger('Events') },
    ...(options.fieldManager ? { fieldManager: options.fieldManager } : {}),
    logger: log,
    ...(lock ? { leaderElection: lock } : {}),
    ...(sharding ? { sharding } : {}),
    onLeadershipLost: () => {
      if (election?.onLost === 'stop') return; // the manager stands by and campaigns again
      log.error(
        'exiting: this replica lost the lease; its reconciles were aborted (set leaderElection.onLost to "stop" to stand by and campaign again instead)',
      );
      process.exit(1);
    },
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    ...(options.cacheSyncTimeoutMs ? { syncTimeoutMs: options.cacheSyncTimeoutMs } : {}),
    ...(options.shutdownGraceMs ? { shutdownGraceMs: options.shutdownGraceMs } : {}),
  });
  sharding?.countObjects(() => manager.shardedObjects);
  return manager;
}

/** The shard coordinator `sharding` asks for, or undefined. */
function shardCoordinator(
  transport: Transport,
  informers: InformerCache,
  metrics: OperatorMetrics,
  options: OperatorModuleOptions,
): ShardCoordinator | undefined {
  if (!options.sharding) return undefined;
  const election = options.leaderElection;
  if (!election) {
    throw new Error(
      'OperatorModule: sharding needs leaderElection (the elected leader assigns objects to shards): set leaderElection: { id } as well',
    );
  }
  const sharding = options.sharding === true ? {} : options.sharding;
  const shardId = (sharding.shardId ?? process.env['POD_NAME'] ?? hostname()).toLowerCase();
  const ring = sharding.ring ?? election.id;
  return new ShardCoordinator(transport, informers, {
    ring,
    metrics: metrics.shardingSink(ring, shardId),
    shardId,
    namespace: leaseNamespace(options),
    ...leaseTiming(sharding, election),
    ...(sharding.tokensPerShard ? { tokensPerShard: sharding.tokensPerShard } : {}),
    ...(sharding.resyncMs ? { resyncMs: sharding.resyncMs } : {}),
    logger: runtimeLogger('Sharding'),
  });
}

const providers: Provider[] = [
  {
    provide: OPERATOR_MODULE_OPTIONS,
    inject: [GIVEN_OPERATOR_OPTIONS],
    useFactory: (options: OperatorModuleOptions) =>
      options.readFlags === false ? options : withOperatorFlags(options, readOperatorFlags()),
  },
  {
    provide: KUBE_CONFIG,
    inject: [OPERATOR_MODULE_OPTIONS],
    useFactory: (options: OperatorModuleOptions) => loadKubeConfig(options.kubeConfig),
  },
  {
    provide: Transport,
    inject: [KUBE_CONFIG, OPERATOR_MODULE_OPTIONS],
    useFactory: (kubeConfig: KubeConfigSource, options: OperatorModuleOptions) =>
      Transport.fromKubeConfig(kubeConfig, options.transport),
  },
  {
    provide: InformerCache,
    inject: [Transport, OPERATOR_MODULE_OPTIONS],
    useFactory: (transport: Transport, options: OperatorModuleOptions) => {
      const { defaults, byResource } = cacheSettings(options.cache);
      return new InformerCache(transport, { logger: runtimeLogger('Informer'), ...defaults }, byResource);
    },
  },
  { provide: OperatorMetrics, useFactory: () => new OperatorMetrics() },
  {
    provide: Manager,
    inject: [Transport, InformerCache, OperatorMetrics, OPERATOR_MODULE_OPTIONS],
    useFactory: createManager,
  },
  { provide: KubeClient, inject: [Manager], useFactory: (manager: Manager) => manager.client },
  { provide: EventRecorder, inject: [Manager], useFactory: (manager: Manager) => manager.events },
  OperatorRegistry,
  OperatorExplorer,
  OperatorLifecycle,
  OperatorHttpServer,
  WebhookExplorer,
  WebhookServer,
];

/**
 * Runs the application's `@Controller` classes as Kubernetes controllers.
 *
 * ```ts
 * @Module({ imports: [OperatorModule.forRoot({ namespace: 'prod' })], providers: [MemcachedController] })
 * ```
 *
 * `OperatorModule.forRoot()` with no options takes every setting from the deployment's flags
 * and environment (`--leader-elect`, `METRICS_BIND_ADDRESS`, ...) and the defaults.
 */
@Module({
  imports: [DiscoveryModule],
  providers,
  exports: [
    OPERATOR_MODULE_OPTIONS,
    KUBE_CONFIG,
    Transport,
    InformerCache,
    Manager,
    KubeClient,
    EventRecorder,
    OperatorRegistry,
    OperatorMetrics,
    OperatorHttpServer,
    WebhookServer,
  ],
})
export class OperatorModule extends ConfigurableOperatorModule {
  static override forRoot(options: typeof OPERATOR_OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }
}
