import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { objectShardKey, shardKeyOf } from './shard-key.js';

const website = { group: 'example.com', kind: 'Website' };
const deployment = { group: 'apps', kind: 'Deployment' };
const configMap = { group: '', kind: 'ConfigMap' };

describe('shard keys', () => {
  it('keys an object by group/kind/namespace/name, without its UID', () => {
    assert.equal(
      shardKeyOf(website, { metadata: { name: 'blog', namespace: 'team-a', uid: 'u-1' } }),
      'example.com/Website/team-a/blog',
    );
    assert.equal(shardKeyOf(configMap, { metadata: { name: 'c', namespace: 'ns' } }), '/ConfigMap/ns/c');
    assert.equal(objectShardKey({ group: '', kind: 'Namespace' }, undefined, 'ns'), '/Namespace//ns');
  });

  it("keys a controlled object by its controller owner, in the child's namespace", () => {
    const child = {
      metadata: {
        generateName: 'blog-',
        namespace: 'team-a',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'other', uid: 'u-0' },
          { apiVersion: 'example.com/v1alpha1', kind: 'Website', name: 'blog', uid: 'u-1', controller: true },
        ],
      },
    };
    assert.equal(
      shardKeyOf(deployment, child),
      shardKeyOf(website, { metadata: { name: 'blog', namespace: 'team-a' } }),
    );
    const coreOwned = {
      metadata: {
        name: 'x',
        namespace: 'n',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u', controller: true }],
      },
    };
    assert.equal(shardKeyOf(deployment, coreOwned), '/ConfigMap/n/c');
  });

  it('keys an object whose owners are not controllers by itself', () => {
    const object = {
      metadata: {
        name: 'web',
        namespace: 'n',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u', controller: false }],
      },
    };
    assert.equal(shardKeyOf(deployment, object), 'apps/Deployment/n/web');
  });

  it('refuses an object without a name or controller owner, saying why', () => {
    assert.throws(
      () => shardKeyOf(website, { metadata: { namespace: 'n' } }),
      /shard key of a Website without metadata.name .*generateName/,
    );
  });
});
