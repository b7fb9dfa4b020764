import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Lease } from '../client/kinds.js';
import { isAvailable, nextTransition, shardState } from './shard-state.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

function lease(holder: string | undefined, renewTime?: string, seconds?: number): V1Lease {
  return {
    metadata: { name: 'shard-a' },
    spec: { holderIdentity: holder, renewTime, leaseDurationSeconds: seconds },
  };
}

describe('shard states', () => {
  const held = lease('shard-a', '2030-01-01T00:00:00.000000Z', 10);

  it('is ready, then expired, then uncertain as time passes without renewal', () => {
    assert.equal(shardState(held, T0), 'ready');
    assert.equal(shardState(held, T0 + 9_999), 'ready');
    assert.equal(shardState(held, T0 + 10_000), 'expired');
    assert.equal(shardState(held, T0 + 19_999), 'expired');
    assert.equal(shardState(held, T0 + 20_000), 'uncertain');
    assert.equal(shardState(held, T0 + 3_600_000), 'uncertain');
  });

  it('gives the next transition time, none once uncertain', () => {
    assert.equal(nextTransition(held, T0), T0 + 10_000);
    assert.equal(nextTransition(held, T0 + 10_000), T0 + 20_000);
    assert.equal(nextTransition(held, T0 + 20_000), undefined);
  });

  it('measures from when the reader saw the renewal, on the reader’s clock, when it knows', () => {
    const seenAt = T0 + 30_000; // the shard's clock is 30 s behind the reader's
    assert.equal(shardState(held, T0 + 39_999, seenAt), 'ready');
    assert.equal(shardState(held, T0 + 40_000, seenAt), 'expired');
    assert.equal(nextTransition(held, T0 + 40_000, seenAt), T0 + 50_000);
    assert.equal(shardState(held, 5_000, 0), 'ready', 'on any clock: renewTime is not read then');
    assert.equal(shardState(held, 20_000, 0), 'uncertain');
  });

  it('is dead when released or held by anyone but the shard, at any time', () => {
    for (const holder of [undefined, '', 'nestor-shard-members']) {
      const other = lease(holder, '2030-01-01T00:00:00.000000Z', 10);
      assert.equal(shardState(other, T0), 'dead');
      assert.equal(nextTransition(other, T0), undefined);
    }
  });

  it('is uncertain when held without times', () => {
    assert.equal(shardState(lease('shard-a'), T0), 'uncertain');
    assert.equal(shardState(lease('shard-a', 'not a time', 10), T0), 'uncertain');
  });

  it('counts every state but dead as available', () => {
    assert.deepEqual((['ready', 'expired', 'uncertain', 'dead'] as const).map(isAvailable), [true, true, true, false]);
  });
});
