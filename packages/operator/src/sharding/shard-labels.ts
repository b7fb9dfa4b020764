// The labels that carry an object's shard. Ring-scoped, so one object can belong to
// several rings (one per controller that shards it).

/** Prefix of the shard label: `shard.nestor.dev/<ring>` = the shard id. */
export const SHARD_LABEL_PREFIX = 'shard.nestor.dev/';
/** Prefix of the drain label: `drain.shard.nestor.dev/<ring>` = the target shard id (or 'true'). */
export const DRAIN_LABEL_PREFIX = 'drain.shard.nestor.dev/';
/** The label on every shard Lease, naming its ring: `shard.nestor.dev/ring=<ring>`. */
export const RING_LABEL = 'shard.nestor.dev/ring';

/** A label value or the name part of a label key, not empty: ≤ 63 chars of [A-Za-z0-9._-], alphanumeric at both ends. */
const LABEL_TOKEN = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

/** True when `value` is a non-empty label value (hence usable as a shard id in a label). */
export function isLabelToken(value: string): boolean {
  return LABEL_TOKEN.test(value);
}

/** Throws a clear error unless `id` can be a shard id, which is written as a label value. */
export function assertShardId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !LABEL_TOKEN.test(id)) {
    throw new Error(
      `invalid shard id ${JSON.stringify(id)}: a shard id is a label value, 1 to 63 characters of ` +
        'letters, digits, ".", "_" and "-", starting and ending with a letter or digit (e.g. a pod or StatefulSet name)',
    );
  }
}

/** When the leader asked for a drain (RFC 3339), so the shard that hands over can say how long it took. */
export const DRAIN_REQUESTED_AT_ANNOTATION = 'shard.nestor.dev/drain-requested-at';

/** The label names of one ring. */
export interface ShardLabels {
  readonly ring: string;
  /** `shard.nestor.dev/<ring>`: the shard that owns the object. */
  readonly shard: string;
  /** `drain.shard.nestor.dev/<ring>`: set while the owning shard is asked to let the object go. */
  readonly drain: string;
}

/**
 * The shard and drain label names of `ring`, checked: the ring name becomes the name part of
 * both label keys and the value of the Leases' ring label.
 */
export function shardLabels(ring: string): ShardLabels {
  if (typeof ring !== 'string' || !LABEL_TOKEN.test(ring)) {
    throw new Error(
      `invalid ring name ${JSON.stringify(ring)}: it becomes the name part of the labels ` +
        `${SHARD_LABEL_PREFIX}<ring> and ${DRAIN_LABEL_PREFIX}<ring>, so it must be 1 to 63 characters of ` +
        'letters, digits, ".", "_" and "-", starting and ending with a letter or digit',
    );
  }
  if (`${SHARD_LABEL_PREFIX}${ring}` === RING_LABEL) {
    throw new Error(`the ring name "ring" is reserved: ${RING_LABEL} is the label that names a shard Lease's ring`);
  }
  return { ring, shard: `${SHARD_LABEL_PREFIX}${ring}`, drain: `${DRAIN_LABEL_PREFIX}${ring}` };
}

/** The label selector of one shard's informers: the objects `shardId` owns in `ring`. */
export function shardSelector(ring: string, shardId: string): string {
  assertShardId(shardId);
  return `${shardLabels(ring).shard}=${shardId}`;
}

/** The label selector of the objects no shard owns yet in `ring`. */
export function unassignedSelector(ring: string): string {
  return `!${shardLabels(ring).shard}`;
}
