import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import { type KubeObject, Transport } from '@nestor/core';
import { configMapsPath, createConfigMap, patchConfigMap } from '../../test-support/e2e-helpers.js';
import { NAMESPACE_INDEX, OWNER_INDEX, type InformerEvent } from './informer.js';
import { InformerCache } from './informer-cache.js';

describe('InformerCache against the shared API server', () => {
  let env: TestEnvironment;
  let transport: Transport;
  let cache: InformerCache;

  before(async () => {
    env = await TestEnvironment.start();
    transport = await Transport.fromKubeConfig(env.kubeConfig);
    cache = new InformerCache(transport, { backoff: { initialMs: 100, maxMs: 1000 } });
  });
  after(async () => {
    cache?.stopAll();
    transport?.close();
    await env?.stop();
  });

  it('shares one watch per selector and keeps namespace, owner and custom indexes', async () => {
    // A label only this test uses, so that an all-namespaces informer sees only its objects.
    const run = randomBytes(4).toString('hex');
    const labels = { 'nestor-test': run };
    const [nsA, nsB] = [await env.createNamespace('informer-a'), await env.createNamespace('informer-b')];
    const owner = await createConfigMap(env.client, nsA, 'owner', { labels: { ...labels, role: 'owner' } });
    const ownerRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, controller: true };
    await createConfigMap(env.client, nsA, 'child-1', {
      labels: { ...labels, role: 'child' },
      ownerReferences: [ownerRef],
    });
    await createConfigMap(env.client, nsB, 'other', { labels: { ...labels, role: 'child' } });

    const watchesBefore = transport.stats.watches;
    const first = cache.acquire(ConfigMap, { labelSelector: `nestor-test=${run}` });
    const second = cache.acquire(ConfigMap, { labelSelector: `nestor-test=${run}` });
    assert.equal(first.informer, second.informer);
    const informer = first.informer;
    informer.addIndex('role', (cm) => (cm.metadata?.labels?.role ? [cm.metadata.labels.role] : []));
    const events: InformerEvent<KubeObject>[] = [];
    informer.events$.subscribe((event) => events.push(event));

    await informer.whenSynced(AbortSignal.timeout(30_000));
    assert.equal(informer.synced, true);
    assert.equal(informer.size, 3);
    await waitFor(() => transport.stats.watches - watchesBefore === 1, { what: 'the watch request' });
    const names = (objects: KubeObject[]) => objects.map((o) => o.metadata?.name).sort();
    assert.deepEqual(names(informer.list(nsA)), ['child-1', 'owner']);
    assert.deepEqual(names(informer.byIndex(NAMESPACE_INDEX, nsB)), ['other']);
    assert.deepEqual(names(informer.byIndex(OWNER_INDEX, owner.metadata.uid)), ['child-1']);
    assert.deepEqual(names(informer.byIndex('role', 'child')), ['child-1', 'other']);
    assert.equal(informer.get({ namespace: nsA, name: 'owner' })?.metadata?.uid, owner.metadata.uid);
    assert.equal(cache.find(ConfigMap, nsA), undefined, 'a label-selected informer does not serve all reads');

    // Updates move objects between index values; deletes drop them.
    await createConfigMap(env.client, nsB, 'child-2', { labels: { ...labels, role: 'child' } });
    await patchConfigMap(env.client, nsB, 'other', { metadata: { labels: { role: 'owner' } } });
    await env.client.request('DELETE', configMapsPath(nsA, 'child-1'));
    await waitFor(
      () =>
        informer.get(`${nsB}/child-2`) &&
        !informer.get(`${nsA}/child-1`) &&
        informer.byIndex('role', 'owner').length === 2,
      {
        what: 'the informer to follow the changes',
      },
    );
    assert.deepEqual(names(informer.byIndex('role', 'child')), ['child-2']);
    assert.deepEqual(informer.byIndex(OWNER_INDEX, owner.metadata.uid), []);
    const updated = events.find((e) => e.type === 'updated' && e.object.metadata?.name === 'other');
    assert.equal(updated?.old?.metadata?.labels?.role, 'child');
    assert.equal(transport.stats.watches - watchesBefore, 1, 'still one watch on the wire for two holders');

    first.release();
    assert.equal(cache.all().includes(informer), true, 'held by the second holder');
    second.release();
    assert.equal(cache.all().includes(informer), false);
  });

  it('serves cache reads from an unselected informer once it is synced', async () => {
    const ns = await env.createNamespace('informer-find');
    await createConfigMap(env.client, ns, 'present');
    const handle = cache.acquire(ConfigMap, { namespace: ns });
    await handle.informer.whenSynced(AbortSignal.timeout(30_000));
    const found = cache.find(ConfigMap, ns);
    assert.equal(found, handle.informer);
    // The first LIST is served from the API server's watch cache (resourceVersion 0, as
    // client-go's reflector), which may not hold an object created just before it under
    // load: the watch brings it.
    const present = await waitFor(() => found?.get({ namespace: ns, name: 'present' }), {
      timeoutMs: 30_000,
      what: 'the ConfigMap in the informer',
    });
    assert.equal(present.metadata?.name, 'present');
    handle.release();
    assert.equal(cache.find(ConfigMap, ns), undefined);
  });
});
