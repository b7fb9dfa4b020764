// Unit tests of the pure parts: the Deployment a Memcached wants, and the status it reports.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeploymentObject } from '../kube-types.js';
import { deploymentFor } from './memcached.deployment.js';
import type { Memcached } from './memcached.resource.js';
import { conditionOf, memcachedStatus } from './memcached.status.js';

const memcached = (size: number, generation = 1, status?: Memcached['status']): Memcached => ({
  apiVersion: 'cache.example.com/v1alpha1',
  kind: 'Memcached',
  metadata: { name: 'sample', namespace: 'ns', generation, uid: 'u-1' },
  spec: { size, containerPort: 11211 },
  ...(status ? { status } : {}),
});

const deployment = (status: NonNullable<DeploymentObject['status']>, generation = 1): DeploymentObject => ({
  metadata: { name: 'sample', generation },
  status: { observedGeneration: generation, ...status },
});

describe('deploymentFor', () => {
  it('runs spec.size memcached pods on spec.containerPort', () => {
    const d = deploymentFor({ ...memcached(3), spec: { size: 3, containerPort: 11311 } }, 'memcached:test');
    assert.equal(d.spec?.replicas, 3);
    const container = d.spec?.template.spec?.containers[0];
    assert.equal(container?.image, 'memcached:test');
    assert.equal(container?.ports?.[0]?.containerPort, 11311);
    assert.ok(container?.command?.includes('--port=11311'));
    assert.deepEqual(d.spec?.selector.matchLabels, d.spec?.template.metadata?.labels);
    assert.equal(d.metadata?.ownerReferences, undefined, 'the controller applies it with { owner }');
  });
});

describe('memcachedStatus', () => {
  it('is Progressing and not Available before any pod is available', () => {
    const status = memcachedStatus(memcached(2), deployment({ replicas: 2, updatedReplicas: 2 }));
    const m = memcached(2, 1, status);
    assert.equal(conditionOf(m, 'Available')?.status, 'False');
    assert.deepEqual(
      { status: conditionOf(m, 'Progressing')?.status, message: conditionOf(m, 'Progressing')?.message },
      { status: 'True', message: '0/2 pods available' },
    );
    assert.equal(conditionOf(m, 'Degraded')?.status, 'False');
    assert.equal(status.observedGeneration, 1);
  });

  it('waits for the Deployment controller to observe a new spec', () => {
    const stale = {
      ...deployment({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }),
      metadata: { generation: 2 },
    };
    const m = memcached(1, 2, memcachedStatus(memcached(1, 2), stale));
    assert.match(conditionOf(m, 'Progressing')?.message ?? '', /observe the new spec/);
  });

  it('is Available and done once size pods run the current spec', () => {
    const done = deployment({ replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
    const status = memcachedStatus(memcached(3), done);
    const m = memcached(3, 1, status);
    assert.equal(conditionOf(m, 'Available')?.status, 'True');
    assert.equal(conditionOf(m, 'Progressing')?.reason, 'RolloutComplete');
    assert.equal(status.readyReplicas, 3);
    assert.deepEqual(
      status.conditions?.map((c) => c.type),
      ['Available', 'Progressing', 'Degraded'],
    );
  });

  it('keeps lastTransitionTime while a condition keeps its status, and is then equal (no write)', () => {
    const done = deployment({ replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 });
    const first = memcachedStatus(memcached(1), done);
    const old = '2020-01-01T00:00:00Z';
    const aged = { ...first, conditions: first.conditions!.map((c) => ({ ...c, lastTransitionTime: old })) };
    const second = memcachedStatus(memcached(1, 1, aged), done);
    assert.deepEqual(second, aged);
  });

  it('is Degraded when the Deployment reports a failure or cannot be applied', () => {
    const failing = deployment({
      replicas: 0,
      conditions: [{ type: 'ReplicaFailure', status: 'True', message: 'exceeded quota' }],
    });
    const m = memcached(1, 1, memcachedStatus(memcached(1), failing));
    assert.deepEqual(
      { reason: conditionOf(m, 'Degraded')?.reason, message: conditionOf(m, 'Degraded')?.message },
      { reason: 'ReplicaFailure', message: 'exceeded quota' },
    );
    const refused = memcachedStatus(memcached(1), undefined, { reason: 'ApplyFailed', message: 'forbidden' });
    const r = memcached(1, 1, refused);
    assert.equal(conditionOf(r, 'Degraded')?.status, 'True');
    assert.equal(conditionOf(r, 'Progressing')?.status, 'False');
  });
});
