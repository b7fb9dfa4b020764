import { ringPosition } from './hash64.js';
import { assertShardId } from './shard-labels.js';

export interface HashRingOptions {
  /** Virtual nodes per shard (default 100): more tokens, better balance, bigger ring. */
  tokensPerShard?: number;
}

/** Default tokens per shard, as timebertt's sharder: within about 0.75-1.25x of fair share for 3 shards. */
export const DEFAULT_TOKENS_PER_SHARD = 100;

/**
 * A consistent-hash ring: each shard owns `tokensPerShard` points (hash of `shardId#i`), a
 * key belongs to the first point at or after its own hash, wrapping around. Adding a
 * shard takes keys only for itself; removing one hands only its keys to the others.
 * Immutable: membership changes build a new ring (cheap: shards × tokens hashes).
 */
export class HashRing {
  /** The shards, sorted. */
  readonly shards: readonly string[];
  private readonly members: ReadonlySet<string>;
  private readonly positions: Float64Array;
  /** Index into `shards` of each position's owner. */
  private readonly owners: Uint16Array;

  constructor(shardIds: Iterable<string>, options: HashRingOptions = {}) {
    const tokens = options.tokensPerShard ?? DEFAULT_TOKENS_PER_SHARD;
    if (!Number.isInteger(tokens) || tokens < 1 || tokens > 10_000) {
      throw new Error(`tokensPerShard must be an integer from 1 to 10000, got ${tokens}`);
    }
    const ids = [...shardIds];
    const seen = new Set<string>();
    for (const id of ids) {
      assertShardId(id);
      if (seen.has(id)) throw new Error(`shard id "${id}" is given twice: each shard needs its own id`);
      seen.add(id);
    }
    if (ids.length > 0xffff) throw new Error(`a ring holds at most 65535 shards, got ${ids.length}`);
    this.shards = ids.sort();
    this.members = seen;

    const points: Array<{ at: number; owner: number }> = [];
    this.shards.forEach((id, owner) => {
      for (let i = 0; i < tokens; i++) points.push({ at: ringPosition(`${id}#${i}`), owner });
    });
    // A collision of 53-bit positions is vanishingly rare; ties go to the smaller shard id so
    // every replica builds the same ring.
    points.sort((a, b) => a.at - b.at || a.owner - b.owner);
    this.positions = Float64Array.from(points, (p) => p.at);
    this.owners = Uint16Array.from(points, (p) => p.owner);
  }

  /** The shard that owns `key`, or undefined when the ring is empty. */
  shardFor(key: string): string | undefined {
    const n = this.positions.length;
    if (n === 0) return undefined;
    const at = ringPosition(key);
    // First position >= at; past the last one wraps to the first.
    let low = 0;
    let high = n;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.positions[mid]! < at) low = mid + 1;
      else high = mid;
    }
    return this.shards[this.owners[low === n ? 0 : low]!];
  }

  /** True when `shardId` is one of the ring's shards. */
  has(shardId: string): boolean {
    return this.members.has(shardId);
  }
}
