import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterLeaseName } from './cluster-shards.js';

describe('clusterLeaseName', () => {
  it('reads as the ring and the cluster when the name is a DNS label', () => {
    assert.equal(clusterLeaseName('widgets', 'east-1'), 'widgets-cluster-east-1');
  });

  it('stays a valid, unambiguous Lease name for any cluster name', () => {
    const a = clusterLeaseName('widgets', 'kind-East_1');
    const b = clusterLeaseName('widgets', 'kind-east-1_');
    assert.match(a, /^widgets-cluster-kind-east-1-[0-9a-f]{16}$/);
    assert.notEqual(a, b, 'two names that slug alike get different Leases');
    const long = clusterLeaseName('widgets', `arn:aws:eks:eu-west-1:123456789012:cluster/${'x'.repeat(300)}`);
    assert.ok(long.length <= 253 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(long), long);
    assert.match(clusterLeaseName('widgets', '___'), /^widgets-cluster-[0-9a-f]{16}$/);
  });
});
