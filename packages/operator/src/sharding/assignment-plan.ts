import type { HashRing } from './hash-ring.js';

/** What the planner needs of one object (its labels read from a metadata LIST or a watch). */
export interface AssignmentInput {
  /** The ring key (`shardKeyOf`). */
  readonly key: string;
  /** The shard label's value, if set. */
  readonly shard?: string;
  /** The drain label's value, if set (any value: a drain is under way). */
  readonly drain?: string;
  /**
   * True for objects keyed by a controller owner (children). They are never drained: on a
   * live shard they move inside their owner's hand-over (the owner's drain is what
   * synchronises the reconcile that manages them), so the planner leaves them there;
   * unassigned or on a dead shard they are assigned at once, to the shard the ring names
   * for their owner.
   */
  readonly controlled?: boolean;
}

/**
 * One write the assigner makes, guarded by the object's resourceVersion:
 * - `assign`: set the shard label to `shard` and remove the drain label. The object has no
 *   owning shard (no label, or its shard is not available), so nobody reconciles it.
 * - `drain`: set the drain label to `shard`. An available shard owns the object but the
 *   ring now names `shard`; the owner acknowledges by removing both labels, and the
 *   object is assigned on a later pass (or by admission).
 */
export interface AssignmentAction<T extends AssignmentInput = AssignmentInput> {
  readonly type: 'assign' | 'drain';
  readonly object: T;
  readonly shard: string;
}

export interface AssignmentPlan<T extends AssignmentInput = AssignmentInput> {
  /** At most `maxMoves` actions, assignments first (those objects wait for nobody else). */
  readonly actions: AssignmentAction<T>[];
  /** Actions left for a later pass by the cap. */
  readonly deferred: number;
  /**
   * Objects draining to a live shard that the ring no longer names for them: nothing to do
   * until the drain is acknowledged, then they need another move, so another pass.
   */
  readonly waiting: number;
}

export interface AssignmentPlanOptions {
  /** Most actions in one pass (default 100), so a rebalance is paced rather than one burst of writes. */
  maxMoves?: number;
}

/** Default cap on the writes of one assignment pass, as timebertt's sharder's concurrent moves. */
export const DEFAULT_MAX_MOVES = 100;

/**
 * The writes that bring `objects` to the shards `ring` names, where the ring holds exactly
 * the available shards. Pure. An object already on its ring shard, or draining from an
 * available shard to an available shard (waiting for the acknowledgement), needs nothing;
 * a drain to a shard that is no longer available is requested again; an empty ring plans
 * nothing, as there is no shard to give objects to. A controlled object on a live shard
 * needs nothing either: its owner's hand-over moves it. Applying the plan (and the drains'
 * acknowledgements, which carry the children) and planning again yields no action.
 */
export function planAssignments<T extends AssignmentInput>(
  objects: Iterable<T>,
  ring: HashRing,
  options: AssignmentPlanOptions = {},
): AssignmentPlan<T> {
  const maxMoves = options.maxMoves ?? DEFAULT_MAX_MOVES;
  if (!Number.isInteger(maxMoves) || maxMoves < 1) {
    throw new Error(`maxMoves must be a positive integer, got ${maxMoves}`);
  }
  const assigns: AssignmentAction<T>[] = [];
  const drains: AssignmentAction<T>[] = [];
  let wanted = 0;
  let waiting = 0;
  if (ring.shards.length === 0) return { actions: [], deferred: 0, waiting: 0 };
  for (const object of objects) {
    const current = object.shard;
    const owned = current !== undefined && current !== '' && ring.has(current);
    let action: AssignmentAction<T> | undefined;
    if (!owned) {
      action = { type: 'assign', object, shard: ring.shardFor(object.key)! };
    } else if (object.controlled) {
      // On a live shard, with its owner or waiting for the owner's hand-over to carry it.
    } else if (object.drain === undefined) {
      const target = ring.shardFor(object.key)!;
      if (target !== current) action = { type: 'drain', object, shard: target };
    } else if (!ring.has(object.drain)) {
      // The drain's target is gone (died before the hand-over, or never was a shard): the
      // owner would hand the object to nobody, and no later change of the ring would look
      // at it again. Ask again, for the shard the ring names now.
      action = { type: 'drain', object, shard: ring.shardFor(object.key)! };
    } else if (object.drain !== ring.shardFor(object.key)) {
      // Not asked again while the old shard may be handing it over (with its children):
      // once it has, a later pass moves it on.
      waiting++;
    }
    if (!action) continue;
    wanted++;
    // Assignments first: they are objects nobody reconciles. Kept only up to the cap, so memory stays bounded.
    if (action.type === 'assign' && assigns.length < maxMoves) assigns.push(action);
    else if (action.type === 'drain' && drains.length < maxMoves) drains.push(action);
  }
  const actions = [...assigns, ...drains].slice(0, maxMoves);
  return { actions, deferred: wanted - actions.length, waiting };
}
