import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leaseTiming } from './lease-timing.js';

describe('leaseTiming', () => {
  it('takes each field from the first layer that sets it, so shard Leases fall back to leader election', () => {
    const sharding = { renewDeadlineMs: 8_000 };
    const election = { leaseDurationMs: 20_000, renewDeadlineMs: 12_000 };
    assert.deepEqual(leaseTiming(sharding, election), { leaseDurationMs: 20_000, renewDeadlineMs: 8_000 });
  });

  it('passes on no unset field, and only the timing fields', () => {
    const timing = leaseTiming({ name: 'op', retryPeriodMs: undefined } as { retryPeriodMs?: number }, undefined);
    assert.deepEqual(timing, {});
    assert.equal('retryPeriodMs' in timing, false);
  });
});
