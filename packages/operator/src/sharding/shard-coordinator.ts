import type { KubeObject, ResourceDescriptor, RuntimeLogger, Transport } from '@nestor/core';
import type { InformerCache } from '../runtime/cache/informer-cache.js';
import type { LeaderElection } from '../runtime/manager/manager.js';
import { leaseTiming, type LeaseTiming } from '../runtime/leases/lease-timing.js';
import type { ObjectTimer } from '../runtime/controller/object-timers.js';
import type { Reconciler } from '../runtime/controller/reconciler.js';
import type {
  ChildrenOf,
  ShardedChild,
  ShardedObjects,
  ShardingMetrics,
  ShardingHooks,
} from '../runtime/controller/sharding-hooks.js';
import { ClusterShards } from './cluster-shards.js';
import { ShardAssigner, type AssignerStats } from './shard-assigner.js';
import { shardLabels, shardSelector, type ShardLabels } from './shard-labels.js';
import { ShardLease } from './shard-lease.js';
import { ShardMembers } from './shard-members.js';
import { ShardGuard } from './shard-guard.js';

/** The shard Leases' timing is leader election's by default (15 s, 10 s, 2 s). */
export interface ShardingOptions extends LeaseTiming {
  /** The ring: names the labels (`shard.nestor.dev/<ring>`) and groups the shard Leases. */
  ring: string;
  /** This replica's shard id (a pod name): its Lease's name and the label value of its objects. */
  shardId: string;
  /** Where the shard Leases live (the operator's namespace). */
  namespace: string;
  /** Ring tokens per shard (default 100). */
  tokensPerShard?: number;
  /** The leader's full rebalance pass this often (default 5 min), besides membership changes. */
  resyncMs?: number;
  /** How long membership must stay still before a rebalance pass (default 1 s). */
  settleMs?: number;
}

/**
 * Built-in sharding for one manager: this replica's shard Lease, the label selector of its
 * share, the drain hand-over around the sharded reconcilers, and (while it leads) the
 * assigner. The manager takes it as its `sharding` option.
 */
export class ShardCoordinator implements ShardingHooks {
  readonly shardId: string;
  readonly selector: string;
  readonly labels: ShardLabels;
  readonly membership: LeaderElection;
  /** A fleet's member clusters spread over the ring's shards, each under a Lease of its own. */
  readonly clusters: ClusterShards;
  private readonly lease: ShardLease;
  private readonly assigner: ShardAssigner;
  private readonly metrics: ShardingMetrics | undefined;
  private readonly guard: ShardGuard;

  constructor(
    private readonly transport: Transport,
    informers: InformerCache,
    options: ShardingOptions & { logger?: RuntimeLogger; metrics?: ShardingMetrics },
  ) {
    this.metrics = options.metrics;
    this.labels = shardLabels(options.ring);
    this.shardId = options.shardId;
    this.selector = shardSelector(options.ring, options.shardId);
    const lease = new ShardLease(transport, {
      ring: options.ring,
      shardId: options.shardId,
      namespace: options.namespace,
      ...leaseTiming(options),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    this.lease = lease;
    this.guard = new ShardGuard({
      transport,
      labels: this.labels,
      shardId: this.shardId,
      assertWritable: () => lease.assertWritable(),
      ...(this.metrics ? { handedOver: (seconds?: number) => this.metrics!.handedOver(seconds) } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    // While the Lease was not held the leader may have moved this shard's objects away.
    lease.onLost(() => this.guard.suspect());
    this.membership = {
      acquire: (signal) => lease.start(signal),
      release: () => lease.stop(),
      onLost: (listener) => lease.onLost(listener),
      assertWritable: () => lease.assertWritable(),
    };
    this.clusters = new ClusterShards(transport, informers, {
      ring: options.ring,
      shardId: options.shardId,
      namespace: options.namespace,
      ...leaseTiming(options),
      ...(options.tokensPerShard ? { tokensPerShard: options.tokensPerShard } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    const members = () =>
      new ShardMembers(informers, {
        ring: options.ring,
        namespace: options.namespace,
        self: options.shardId,
        takeOver: { transport },
        ...(options.logger ? { logger: options.logger } : {}),
      });
    this.assigner = new ShardAssigner({
      transport,
      informers,
      labels: this.labels,
      members,
      ...(options.tokensPerShard ? { tokensPerShard: options.tokensPerShard } : {}),
      ...(options.resyncMs ? { resyncMs: options.resyncMs } : {}),
      ...(options.settleMs !== undefined ? { settleMs: options.settleMs } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  /** Reports, when scraped, the objects this shard caches (the manager's sharded controllers). */
  countObjects(read: () => number): void {
    this.metrics?.objects(read);
  }

  /** What the assigner did while this replica led. */
  get assignerStats(): AssignerStats {
    return this.assigner.stats;
  }

  bypassesPredicates(object: KubeObject): boolean {
    return object.metadata?.labels?.[this.labels.drain] !== undefined;
  }

  childLabels(owner: KubeObject, fresh?: ShardedChild): Record<string, string> | undefined {
    const shard = owner.metadata?.labels?.[this.labels.shard];
    if (shard !== this.shardId) return undefined;
    if (fresh) this.guard.childWritten(fresh.resource, fresh.object);
    return { [this.labels.shard]: shard };
  }

  useChildren(children: ChildrenOf): void {
    this.guard.children = children;
  }

  childSeen(owner: ResourceDescriptor, resource: ResourceDescriptor, child: KubeObject): void {
    this.guard.childSeen(owner, resource, child);
  }

  wrap<T extends KubeObject>(resource: ResourceDescriptor<T>, reconcile: Reconciler<T>): Reconciler<T> {
    return this.guard.reconciler(resource, reconcile);
  }

  wrapTimer<T extends KubeObject>(resource: ResourceDescriptor<T>, timer: ObjectTimer<T>): ObjectTimer<T> {
    return this.guard.timer(resource, timer);
  }

  addKinds(primary: ResourceDescriptor, owned: readonly ResourceDescriptor[], scope: ShardedObjects): void {
    this.assigner.addKind({ resource: primary, ...scope });
    for (const resource of owned) {
      this.assigner.addKind({ resource, owner: primary, ...(scope.namespace ? { namespace: scope.namespace } : {}) });
    }
  }

  assign(signal: AbortSignal, assertLeading?: () => void): Promise<void> {
    return this.assigner.run(signal, assertLeading);
  }
}
