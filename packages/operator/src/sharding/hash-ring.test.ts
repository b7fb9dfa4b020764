import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HashRing } from './hash-ring.js';

/** 9,000 object keys as the shard key gives them. */
const KEYS = Array.from({ length: 9000 }, (_, i) => `example.com/Website/team-${i % 37}/site-${i}`);

function counts(ring: HashRing): Map<string, number> {
  const result = new Map(ring.shards.map((s) => [s, 0]));
  for (const key of KEYS) {
    const shard = ring.shardFor(key)!;
    result.set(shard, result.get(shard)! + 1);
  }
  return result;
}

/** Each shard's share relative to a fair share, as [min, max]. */
function spread(ring: HashRing): [number, number] {
  const fair = KEYS.length / ring.shards.length;
  const ratios = [...counts(ring).values()].map((c) => c / fair);
  return [Math.min(...ratios), Math.max(...ratios)];
}

describe('HashRing', () => {
  it('is deterministic: the same shards in any order give the same assignments', () => {
    const a = new HashRing(['shard-0', 'shard-1', 'shard-2']);
    const b = new HashRing(['shard-2', 'shard-0', 'shard-1']);
    assert.deepEqual(a.shards, ['shard-0', 'shard-1', 'shard-2']);
    for (const key of KEYS.slice(0, 500)) assert.equal(a.shardFor(key), b.shardFor(key));
  });

  it('balances 9,000 keys within 0.5x to 1.6x of a fair share for 3 and 5 shards', () => {
    for (const shards of [3, 5]) {
      const ids = Array.from({ length: shards }, (_, i) => `operator-${i}`);
      const [min, max] = spread(new HashRing(ids));
      console.log(`${shards} shards, 100 tokens: ${min.toFixed(2)}x to ${max.toFixed(2)}x of fair share`);
      assert.ok(min >= 0.5 && max <= 1.6, `${shards} shards: ${min}..${max}`);
      const [min1k, max1k] = spread(new HashRing(ids, { tokensPerShard: 1000 }));
      console.log(`${shards} shards, 1000 tokens: ${min1k.toFixed(2)}x to ${max1k.toFixed(2)}x of fair share`);
      assert.ok(min1k >= 0.75 && max1k <= 1.25, `${shards} shards, 1000 tokens: ${min1k}..${max1k}`);
    }
  });

  it('moves only keys for a new shard when one is added, about 1/4 of them from 3 to 4', () => {
    const before = new HashRing(['a-0', 'a-1', 'a-2']);
    const after = new HashRing(['a-0', 'a-1', 'a-2', 'a-3']);
    let moved = 0;
    for (const key of KEYS) {
      const [from, to] = [before.shardFor(key), after.shardFor(key)];
      if (from === to) continue;
      assert.equal(to, 'a-3', `${key} moved from ${from} to ${to}, not to the new shard`);
      moved++;
    }
    console.log(`3 -> 4 shards: ${((moved / KEYS.length) * 100).toFixed(1)} % of keys moved`);
    assert.ok(moved > 0 && moved / KEYS.length < 0.4, `moved ${moved}`);
  });

  it("moves only the removed shard's keys when one leaves", () => {
    const before = new HashRing(['a-0', 'a-1', 'a-2', 'a-3', 'a-4']);
    const after = new HashRing(['a-0', 'a-1', 'a-3', 'a-4']);
    for (const key of KEYS) {
      const from = before.shardFor(key);
      if (from !== 'a-2') assert.equal(after.shardFor(key), from, key);
      else assert.notEqual(after.shardFor(key), 'a-2');
    }
  });

  it('gives no shard on an empty ring', () => {
    const ring = new HashRing([]);
    assert.equal(ring.shardFor('x'), undefined);
    assert.deepEqual(ring.shards, []);
  });

  it('answers has() for its shards only', () => {
    const ring = new HashRing(['a', 'b']);
    assert.equal(ring.has('a'), true);
    assert.equal(ring.has('c'), false);
  });

  it('refuses duplicate and invalid shard ids and bad token counts with clear errors', () => {
    assert.throws(() => new HashRing(['a', 'b', 'a']), /shard id "a" is given twice/);
    for (const bad of ['', '-a', 'a-', 'a b', 'a/b', 'x'.repeat(64)]) {
      assert.throws(() => new HashRing([bad]), /invalid shard id .*a label value, 1 to 63 characters/, bad);
    }
    assert.doesNotThrow(() => new HashRing(['A.b_c-9', 'x'.repeat(63)]));
    assert.throws(() => new HashRing(['a'], { tokensPerShard: 0 }), /tokensPerShard must be an integer/);
    assert.throws(() => new HashRing(['a'], { tokensPerShard: 1.5 }), /tokensPerShard must be an integer/);
  });
});
