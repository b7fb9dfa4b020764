import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertShardId, shardLabels, shardSelector, unassignedSelector } from './shard-labels.js';

describe('shard labels', () => {
  it('names the shard and drain labels after the ring', () => {
    assert.deepEqual(shardLabels('websites'), {
      ring: 'websites',
      shard: 'shard.nestor.dev/websites',
      drain: 'drain.shard.nestor.dev/websites',
    });
    assert.equal(shardSelector('websites', 'op-1'), 'shard.nestor.dev/websites=op-1');
    assert.equal(unassignedSelector('websites'), '!shard.nestor.dev/websites');
  });

  it('refuses ring names that make invalid label names, and the reserved "ring"', () => {
    for (const bad of ['', 'a/b', '-a', 'a.', 'x'.repeat(64), 'with space']) {
      assert.throws(() => shardLabels(bad), /invalid ring name .* 1 to 63 characters/, bad);
    }
    assert.throws(() => shardLabels('ring'), /the ring name "ring" is reserved/);
    assert.doesNotThrow(() => shardLabels('x'.repeat(63)));
  });

  it('refuses shard ids that are not label values', () => {
    assert.throws(() => assertShardId('pod_'), /invalid shard id "pod_"/);
    assert.throws(() => assertShardId(7), /invalid shard id 7/);
    assert.throws(() => shardSelector('r', ''), /invalid shard id ""/);
    assert.doesNotThrow(() => assertShardId('operator-0'));
  });
});
