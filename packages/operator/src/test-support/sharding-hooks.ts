// ShardingHooks that shard nothing: shard `shard-a` of ring `r`, every object its own, no
// assigner work; a unit test overrides what it looks at (the membership, the assigner, the
// cluster placement).
import type { LeaderElection } from '../runtime/leases/leader-election.js';
import type { ShardingHooks } from '../runtime/controller/sharding-hooks.js';

export function inertShardingHooks(membership: LeaderElection, overrides: Partial<ShardingHooks> = {}): ShardingHooks {
  return {
    shardId: 'shard-a',
    selector: 'shard.nestor.dev/r=shard-a',
    membership,
    bypassesPredicates: () => false,
    wrap: (_resource, reconcile) => reconcile,
    wrapTimer: (_resource, timer) => timer,
    childLabels: () => undefined,
    useChildren: () => {},
    childSeen: () => {},
    addKinds: () => {},
    assign: async () => {},
    ...overrides,
  };
}
