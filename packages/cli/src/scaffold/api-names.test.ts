import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiNames, InvalidApiName, kebabCase, pluralOf } from './api-names.js';

describe('apiNames', () => {
  it('derives the plural and the file name from the kind', () => {
    assert.deepEqual(apiNames({ group: 'cache.example.com', version: 'v1alpha1', kind: 'CachePool' }), {
      group: 'cache.example.com',
      version: 'v1alpha1',
      kind: 'CachePool',
      plural: 'cachepools',
      file: 'cache-pool',
    });
    assert.equal(apiNames({ group: 'a.io', version: 'v1', kind: 'Policy' }).plural, 'policies');
    assert.equal(apiNames({ group: 'a.io', version: 'v1', kind: 'Ingress' }).plural, 'ingresses');
    assert.equal(apiNames({ group: 'a.io', version: 'v1', kind: 'Gateway' }).plural, 'gateways');
    assert.equal(apiNames({ group: 'a.io', version: 'v1', kind: 'Octopus', plural: 'octopi' }).plural, 'octopi');
  });

  it('refuses what the API server would, saying what is accepted', () => {
    const refused = (input: Parameters<typeof apiNames>[0], pattern: RegExp) =>
      assert.throws(
        () => apiNames(input),
        (error: Error) => error instanceof InvalidApiName && pattern.test(error.message),
      );
    refused({ group: 'a.io', version: 'v1' }, /--kind are required/);
    refused({ group: 'a.io', version: 'v1', kind: 'memcached' }, /PascalCase/);
    refused({ group: 'a.io', version: 'v1', kind: 'Mem-cached' }, /PascalCase/);
    refused({ group: 'a.io', version: '1', kind: 'Memcached' }, /v1, v2, v1alpha1/);
    refused({ group: 'a.io', version: 'v1gamma1', kind: 'Memcached' }, /v1, v2, v1alpha1/);
    refused({ group: 'example', version: 'v1', kind: 'Memcached' }, /DNS subdomain with a dot/);
    refused({ group: 'Cache.Example.com', version: 'v1', kind: 'Memcached' }, /lower case/);
    refused({ group: 'a.io', version: 'v1', kind: 'Memcached', plural: 'Mems' }, /resource name/);
  });

  it('pluralises and kebab-cases as kubebuilder users expect', () => {
    assert.deepEqual(['box', 'match', 'dish', 'bus', 'key', 'city'].map(pluralOf), [
      'boxes',
      'matches',
      'dishes',
      'buses',
      'keys',
      'cities',
    ]);
    assert.deepEqual(['Memcached', 'CachePool', 'HTTPRoute', 'S3Bucket'].map(kebabCase), [
      'memcached',
      'cache-pool',
      'http-route',
      's3-bucket',
    ]);
  });
});
