// A sharded Manager on connections of its own, as one replica of an operator runs it, for
// the in-process sharding e2e suites (several replicas in one test process).
import { Transport, type KubeConfigSource } from '@nestor/core';
import { InformerCache } from '../runtime/cache/informer-cache.js';
import { LeaseLock } from '../runtime/leases/leader-election.js';
import { Manager } from '../runtime/manager/manager.js';
import { ShardCoordinator } from '../sharding/shard-coordinator.js';

/** Short Leases, so that the suites see takeovers in seconds. */
export const SHORT_LEASES = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };

export interface ShardedReplica {
  manager: Manager;
  transport: Transport;
  lock: LeaseLock;
  sharding: ShardCoordinator;
}

/** A replica of ring `ring` (its leader Lease `<ring>-leader`), not started: add controllers, then start it. */
export async function shardedReplica(
  kubeConfig: KubeConfigSource,
  options: { ring: string; replica: string; namespace: string },
): Promise<ShardedReplica> {
  const { ring, replica, namespace } = options;
  const transport = await Transport.fromKubeConfig(kubeConfig);
  const informers = new InformerCache(transport);
  const lock = new LeaseLock(transport, { name: `${ring}-leader`, namespace, identity: replica, ...SHORT_LEASES });
  const sharding = new ShardCoordinator(transport, informers, {
    ring,
    shardId: replica,
    namespace,
    ...SHORT_LEASES,
    settleMs: 200,
  });
  const manager = new Manager({ transport, informers, leaderElection: lock, sharding, shutdownGraceMs: 5_000 });
  return { manager, transport, lock, sharding };
}
