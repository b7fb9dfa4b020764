// Built-in sharding: membership by shard Leases, assignment by consistent hashing, the labels
// that carry an object's shard. The package entry `@nestor/operator/sharding`.
export { HashRing, DEFAULT_TOKENS_PER_SHARD, type HashRingOptions } from './hash-ring.js';
export { ringPosition } from './hash64.js';
export { shardKeyOf, objectShardKey, type ShardKind } from './shard-key.js';
export {
  shardLabels,
  shardSelector,
  unassignedSelector,
  assertShardId,
  isLabelToken,
  SHARD_LABEL_PREFIX,
  DRAIN_LABEL_PREFIX,
  RING_LABEL,
  DRAIN_REQUESTED_AT_ANNOTATION,
  type ShardLabels,
} from './shard-labels.js';
export { ShardLease, type ShardLeaseOptions } from './shard-lease.js';
export { shardState, nextTransition, isAvailable, shardIdOf, type ShardState } from './shard-state.js';
export { ShardMembers, TAKEOVER_IDENTITY, type ShardMembersOptions } from './shard-members.js';
export {
  planAssignments,
  DEFAULT_MAX_MOVES,
  type AssignmentInput,
  type AssignmentAction,
  type AssignmentPlan,
  type AssignmentPlanOptions,
} from './assignment-plan.js';
export { ShardAssigner, type ShardAssignerOptions, type ShardedKind, type AssignerStats } from './shard-assigner.js';
export { ShardCoordinator, type ShardingOptions } from './shard-coordinator.js';
export {
  ClusterShards,
  clusterKey,
  clusterLeaseName,
  CLUSTER_RING_LABEL,
  type ClusterShardsOptions,
} from './cluster-shards.js';
export { patchLabels, type LabelWrite } from './label-writes.js';
