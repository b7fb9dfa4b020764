import type { KubeObject, ResourceDescriptor } from '@nestor/core';
import type { LeaderElection } from '../leases/leader-election.js';
import type { ObjectTimer } from './object-timers.js';
import type { Reconciler } from './reconciler.js';
import type { ObjectSelector } from '../../client/object-selector.js';
import type { ClusterPlacement } from './cluster-placement.js';

/**
 * What the manager needs of built-in sharding (`sharding/`'s ShardCoordinator): the narrow
 * hooks (a controller's options, its reconciler and timers, a child's labels before a write,
 * children found through the owner index) that keep the runtime free of rings, labels and
 * assignment.
 */
export interface ShardingHooks {
  /** This replica's shard id. */
  readonly shardId: string;
  /** Added to the label selector of the sharded kinds' informers: this shard's objects only. */
  readonly selector: string;
  /** The shard's own Lease: the sharded controllers run while this replica holds it. */
  readonly membership: LeaderElection;
  /** Spreads a fleet's member clusters over the ring's shards (see Fleet's `spread`). */
  readonly clusters?: ClusterPlacement;
  /** True for an object the shard must reconcile whatever the predicates say (a drain request). */
  bypassesPredicates(object: KubeObject): boolean;
  /** Wraps a sharded controller's reconciler: acknowledges drains, skips objects moved away. */
  wrap<T extends KubeObject>(resource: ResourceDescriptor<T>, reconcile: Reconciler<T>): Reconciler<T>;
  /** Wraps a sharded controller's timer: it runs only on this shard's objects, never during a hand-over. */
  wrapTimer<T extends KubeObject>(resource: ResourceDescriptor<T>, timer: ObjectTimer<T>): ObjectTimer<T>;
  /**
   * The labels a child of `owner` is written with, when `owner` is this shard's: its shard
   * label, so that the child is born into its owner's shard (no assignment write). `fresh`
   * is the child when this shard's cache does not hold it yet: should the owner be handed
   * over before the cache shows it, it follows its owner then (see childSeen).
   */
  childLabels(owner: KubeObject, fresh?: ShardedChild): Record<string, string> | undefined;
  /** Where the hand-over finds an owner's children: the sharded controllers' owned informers. */
  useChildren(children: ChildrenOf): void;
  /**
   * A child of a sharded owner was added to or changed in this shard's cache. A child this
   * shard wrote (`fresh`) whose owner it handed over before the cache showed the child
   * follows its owner.
   */
  childSeen(owner: ResourceDescriptor, resource: ResourceDescriptor, child: KubeObject): void;
  /** Registers a sharded controller's kinds with the assigner: the objects its selectors pick, and their children. */
  addKinds(primary: ResourceDescriptor, owned: readonly ResourceDescriptor[], scope: ShardedObjects): void;
  /**
   * Assigns objects to shards while this replica leads, until `signal` aborts. Never
   * rejects. `assertLeading` throws once this replica cannot be sure it still leads: no
   * label or Lease write is made then.
   */
  assign(signal: AbortSignal, assertLeading?: () => void): Promise<void>;
}

/** A cached child of a sharded owner, and its kind. */
export interface ShardedChild {
  resource: ResourceDescriptor;
  object: KubeObject;
}

/** The cached children of `object` (of kind `owner`), of every kind owned with it and sharded. */
export type ChildrenOf = (owner: ResourceDescriptor, object: KubeObject) => ShardedChild[];

/** Which objects of a sharded controller's kind are spread over the shards: those it watches. */
export type ShardedObjects = ObjectSelector;

/** Where sharding reports what it does (OperatorMetrics binds it to Prometheus). */
export interface ShardingMetrics {
  /** The assigner wrote a move: `assign` (a new object, or one of a dead shard) or `drain` (asked a live shard to let go). */
  moved(type: 'assign' | 'drain'): void;
  /** The assigner finished a rebalance pass over every sharded object. */
  rebalanced(seconds: number): void;
  /**
   * This shard handed an object over to the shard its drain request named, `waitedSeconds`
   * after the leader asked (on the leader's clock), when known.
   */
  handedOver(waitedSeconds?: number): void;
  /** Read when scraped: the objects of sharded kinds this shard caches. */
  objects(read: () => number): void;
}

/** @deprecated Renamed `ShardingHooks` ("scope" meant four things); this name goes in the next release. */
export type ShardScope = ShardingHooks;
