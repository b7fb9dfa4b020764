// The admission rules as plain method calls: what the API server sends and how it shows a
// denial is cache-cluster.e2e.test.ts's.
// node:test here (this repository's runner); with Vitest, import describe and it from 'vitest'.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionDenied, type AdmissionContext } from '@nestor/operator';
import { InMemoryCacheDirectory } from './cache-directory.js';
import type { CacheCluster, CacheClusterSpec } from './cache-cluster.resource.js';
import { CacheClusterWebhook } from './cache-cluster.webhook.js';

const cluster = (name: string, spec: Partial<CacheClusterSpec> = {}): CacheCluster => ({
  metadata: { name, namespace: 'shop' },
  spec: {
    replicas: 3,
    image: 'redis:7.4-alpine',
    storage: '1Gi',
    maxMemory: '256Mi',
    evictionPolicy: 'allkeys-lru',
    paused: false,
    ...spec,
  },
});
const inNamespace = (namespace: string) => ({ namespace }) as AdmissionContext<CacheCluster>;

describe('CacheClusterWebhook', () => {
  it('allows a name the directory does not have, or has for the same namespace', async () => {
    const directory = new InMemoryCacheDirectory();
    const webhook = new CacheClusterWebhook(directory);
    await webhook.create(cluster('sessions'), inNamespace('shop'));
    await directory.register({ name: 'sessions', namespace: 'shop', uid: 'u1', endpoint: 'x', replicas: 1 });
    await webhook.create(cluster('sessions'), inNamespace('shop')); // deleted and created again
  });

  it('denies a name the directory has for another namespace, with 409', async () => {
    const directory = new InMemoryCacheDirectory();
    await directory.register({ name: 'sessions', namespace: 'billing', uid: 'u1', endpoint: 'x', replicas: 1 });
    const denial = await new CacheClusterWebhook(directory).create(cluster('sessions'), inNamespace('shop')).then(
      () => assert.fail('admitted'),
      (error: unknown) => error,
    );
    assert.ok(denial instanceof AdmissionDenied);
    assert.equal(denial.code, 409);
    assert.match(denial.message, /already has a cache named sessions, in namespace billing/);
  });

  it('allows spec.storage spelled another way, and denies another size with 422', () => {
    const webhook = new CacheClusterWebhook(new InMemoryCacheDirectory());
    webhook.update(cluster('a', { storage: '1024Mi' }), cluster('a', { storage: '1Gi' }));
    webhook.update(cluster('a', { storage: 1073741824 }), cluster('a', { storage: '1Gi' }));
    assert.throws(
      () => webhook.update(cluster('a', { storage: '2Gi' }), cluster('a', { storage: '1Gi' })),
      (error: unknown) =>
        error instanceof AdmissionDenied &&
        error.code === 422 &&
        /spec\.storage cannot change \(1Gi -> 2Gi\)/.test(error.message),
    );
  });
});
