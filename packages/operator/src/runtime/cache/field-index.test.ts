import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@nestor/core';
import { FakeWatchTransport, object, ConfigMaps } from '../../test-support/fake-watch-transport.js';
import { InformerCache } from './informer-cache.js';

/** An app naming its Secret in a label (the fake's objects carry metadata only). */
const app = (name: string, secret: string | undefined, namespace = 'ns') =>
  object(name, '1', { namespace, ...(secret ? { labels: { secret } } : {}) });
const bySecret = (o: KubeObject) => o.metadata?.labels?.['secret'];

async function cacheOf(items: KubeObject[]) {
  const transport = new FakeWatchTransport();
  transport.onList = () => ({ items, metadata: { resourceVersion: '1' } });
  const cache = new InformerCache(transport);
  return { cache, transport };
}

const names = (objects: KubeObject[] | undefined) => objects?.map((o) => o.metadata!.name).sort();

describe('field indexes of the informer cache', () => {
  it('files objects under the values of the indexer, per namespace, and answers nothing before the kind is cached', async () => {
    const { cache } = await cacheOf([
      app('orders', 'db'),
      app('billing', 'db'),
      app('search', 'cache'),
      app('x', 'db', 'other'),
    ]);
    cache.indexField(ConfigMaps, 'secret', bySecret);
    assert.equal(cache.byField(ConfigMaps, 'secret', 'db'), undefined, 'no informer of the kind: undefined');
    const handle = cache.acquire(ConfigMaps);
    await handle.informer.whenSynced();
    assert.deepEqual(names(cache.byField(ConfigMaps, 'secret', 'db', 'ns')), ['billing', 'orders']);
    assert.deepEqual(names(cache.byField(ConfigMaps, 'secret', 'db')), ['billing', 'orders', 'x']);
    assert.deepEqual(cache.byField(ConfigMaps, 'secret', 'none', 'ns'), []);
    handle.release();
  });

  it('indexes informers made before and after the declaration, and reads a selector informer too', async () => {
    const { cache } = await cacheOf([app('orders', 'db'), app('search', 'cache')]);
    const before = cache.acquire(ConfigMaps, { labelSelector: 'role=app' });
    await before.informer.whenSynced();
    cache.indexField(ConfigMaps, 'secret', bySecret);
    assert.deepEqual(names(cache.byField(ConfigMaps, 'secret', 'db', 'ns')), ['orders']);
    const after = cache.acquire(ConfigMaps, { namespace: 'ns' });
    await after.informer.whenSynced();
    assert.deepEqual(names(cache.byField(ConfigMaps, 'secret', 'db', 'ns')), ['orders'], 'each object once');
  });

  it('refuses an undeclared index and a second indexer under one name, saying what to do', async () => {
    const { cache } = await cacheOf([]);
    assert.throws(() => cache.byField(ConfigMaps, 'secret', 'db'), /no field index named "secret" \(it has none\)/);
    cache.indexField(ConfigMaps, 'secret', bySecret);
    cache.indexField(ConfigMaps, 'secret', bySecret); // the same function again: a no-op
    assert.throws(() => cache.indexField(ConfigMaps, 'secret', () => 'x'), /already, from another function/);
    assert.throws(() => cache.byField(ConfigMaps, 'owner', 'db'), /\(it has "secret"\)/);
  });

  it('files an object whose indexer throws nowhere, and goes on', async () => {
    const { cache } = await cacheOf([app('orders', 'db'), app('broken', undefined)]);
    cache.indexField(ConfigMaps, 'secret', (o) => {
      if (!o.metadata?.labels) throw new Error('no labels');
      return o.metadata.labels['secret'];
    });
    const handle = cache.acquire(ConfigMaps);
    await handle.informer.whenSynced();
    assert.deepEqual(names(cache.byField(ConfigMaps, 'secret', 'db')), ['orders']);
  });
});
