// The seam through which a fleet spreads its member clusters over an operator's replicas:
// built-in sharding (sharding/'s ClusterShards) implements it; the fleet knows nothing of
// rings and Leases but this.
import type { WriteFence } from '../../client/write-fence.js';

/** What the fleet does with a member cluster as its placement changes on this replica. */
export interface PlacedCluster {
  /**
   * This replica holds the cluster's Lease: engage it. `fence` refuses writes once the Lease
   * may be another replica's (the member's client asks it before each write).
   */
  held(fence: WriteFence): void;
  /**
   * The cluster's Lease is no longer surely this replica's: `'lease'` (renewals failed; it
   * is campaigned for again), stand by with the caches warm; `'moved'` (the ring names
   * another replica, or it was unplaced), disengage it. A moved cluster's Lease is released
   * only once this resolves, so the next holder never reconciles beside a run of this one.
   */
  lost(why: 'lease' | 'moved'): Promise<void>;
}

/**
 * Spreads member clusters over the replicas of an operator: each cluster belongs to the
 * replica its hash names among the live shards, which engages it while it holds the
 * cluster's own Lease; a rescale moves whole clusters.
 */
export interface ClusterPlacement {
  /** This replica's shard id. */
  readonly shardId: string;
  /** Starts following the live shards (unless `signal` aborted already); places made before wait for it. */
  start(signal: AbortSignal): void;
  /** Keeps `name` on the replica the ring names: `cluster.held` when that is this one and its Lease is held. */
  place(name: string, cluster: PlacedCluster): void;
  /** Stops placing `name`: awaits its `lost('moved')` if held here, then releases its Lease. */
  unplace(name: string): Promise<void>;
  /** Whether this replica holds `name`'s Lease now (its member may run). */
  holds(name: string): boolean;
  /** The shard the ring names for `name` now (undefined before the ring is known). */
  shardOf(name: string): string | undefined;
  /** Stops following the shards and releases every Lease held (the fleet calls it once its members stopped). */
  stop(): Promise<void>;
}
