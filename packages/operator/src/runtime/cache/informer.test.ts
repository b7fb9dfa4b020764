import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FakeWatchTransport,
  flush,
  object,
  ConfigMaps,
  fakeList as list,
} from '../../test-support/fake-watch-transport.js';
import { Informer, NAMESPACE_INDEX, OWNER_INDEX, type InformerEvent } from './informer.js';
import { InformerCache } from './informer-cache.js';
import { type KubeObject, ManualClock, type ResourceDescriptor } from '@nestor/core';

const Nodes: ResourceDescriptor<KubeObject> = {
  group: '',
  version: 'v1',
  kind: 'Node',
  plural: 'nodes',
  namespaced: false,
};

const owned = (name: string, rv: string, uid: string, namespace = 'ns') =>
  object(name, rv, { namespace, ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid, controller: true }] });

describe('Informer', () => {
  it('keeps the store, the built-in indexes and a custom index up to date, and emits after the store changed', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('1', [owned('a', '1', 'u1'), owned('b', '1', 'u1', 'other')]);
    const informer = new Informer(transport, ConfigMaps);
    informer.addIndex('label', (o) => (o.metadata?.labels?.app ? [o.metadata.labels.app] : []));
    const seen: string[] = [];
    informer.events$.subscribe((event: InformerEvent<KubeObject>) => {
      const key = `${event.object.metadata?.namespace}/${event.object.metadata?.name}`;
      assert.equal(informer.get(key), event.type === 'deleted' ? undefined : event.object, 'store updated first');
      seen.push(
        `${event.type} ${event.object.metadata?.name}${event.old ? ` (old ${event.old.metadata?.resourceVersion})` : ''}`,
      );
    });
    informer.start();
    await informer.whenSynced();
    assert.equal(informer.synced, true);
    const stream = await transport.watchNumber(0);
    stream.push('MODIFIED', owned('a', '2', 'u2', 'ns'));
    stream.push('ADDED', object('c', '3', { labels: { app: 'web' } }));
    stream.push('DELETED', owned('b', '4', 'u1', 'other'));
    await flush();

    assert.deepEqual(seen, ['added a', 'added b', 'updated a (old 1)', 'added c', 'deleted b']);
    assert.equal(informer.size, 2);
    assert.deepEqual(
      informer
        .list('ns')
        .map((o) => o.metadata?.name)
        .sort(),
      ['a', 'c'],
    );
    assert.deepEqual(informer.list('other'), []);
    assert.deepEqual(informer.byIndex(OWNER_INDEX, 'u1'), []);
    assert.deepEqual(
      informer.byIndex(OWNER_INDEX, 'u2').map((o) => o.metadata?.name),
      ['a'],
    );
    assert.deepEqual(
      informer.byIndex('label', 'web').map((o) => o.metadata?.name),
      ['c'],
    );
    assert.deepEqual(informer.indexKeys(NAMESPACE_INDEX, 'ns').sort(), ['ns/a', 'ns/c']);
    assert.equal(informer.get({ namespace: 'ns', name: 'c' })?.metadata?.resourceVersion, '3');
    assert.throws(() => informer.byIndex('nope', 'x'), /has no index "nope" \(it has: namespace, owner, label\)/);
    informer.stop();
  });

  it('builds an index added late over the objects already cached', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('1', [object('a', '1', { labels: { tier: 'db' } })]);
    const informer = new Informer(transport, ConfigMaps);
    informer.start();
    await informer.whenSynced();
    informer.addIndex('tier', (o) => [o.metadata?.labels?.tier ?? 'none']);
    assert.deepEqual(
      informer.byIndex('tier', 'db').map((o) => o.metadata?.name),
      ['a'],
    );
    informer.stop();
  });

  it('an index first asked for after events holds what the store holds, and follows the events after', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('1', [owned('a', '1', 'u1'), owned('b', '1', 'u1')]);
    const informer = new Informer(transport, ConfigMaps);
    informer.start();
    await informer.whenSynced();
    const stream = await transport.watchNumber(0);
    stream.push('MODIFIED', owned('a', '2', 'u2'));
    await flush();
    assert.deepEqual(
      informer.byIndex(OWNER_INDEX, 'u1').map((o) => o.metadata?.name),
      ['b'],
    );
    stream.push('MODIFIED', owned('b', '3', 'u2'));
    stream.push('DELETED', owned('a', '4', 'u2'));
    await flush();
    assert.deepEqual(informer.byIndex(OWNER_INDEX, 'u1'), []);
    assert.deepEqual(
      informer.byIndex(OWNER_INDEX, 'u2').map((o) => o.metadata?.name),
      ['b'],
    );
    informer.stop();
  });

  it('an informer of one namespace lists that namespace whole and no other', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('1', [object('a', '1'), object('b', '1')]);
    const informer = new Informer(transport, ConfigMaps, { namespace: 'ns' });
    informer.start();
    await informer.whenSynced();
    assert.deepEqual(
      informer.list('ns').map((o) => o.metadata?.name),
      ['a', 'b'],
    );
    assert.deepEqual(informer.list('other'), []);
    assert.deepEqual(informer.indexKeys(NAMESPACE_INDEX, 'ns').sort(), ['ns/a', 'ns/b']);
    informer.stop();
  });

  it('keeps its last state once stopped, whatever the watch still had in hand', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('1', [object('a', '1')]);
    const informer = new Informer(transport, ConfigMaps);
    const seen: string[] = [];
    informer.events$.subscribe({ next: (e) => seen.push(`${e.type} ${e.object.metadata?.name}`) });
    informer.start();
    await informer.whenSynced();
    const stream = await transport.watchNumber(0);
    informer.stop();
    stream.push('ADDED', object('b', '2'));
    stream.push('DELETED', object('a', '3'));
    await flush();
    assert.deepEqual(seen, ['added a']);
    assert.deepEqual(
      informer.list().map((o) => o.metadata?.resourceVersion),
      ['1'],
    );
  });

  it('whenSynced rejects on its signal and when the informer stops first', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => new Error('no list yet');
    const informer = new Informer(transport, ConfigMaps, { clock: new ManualClock() });
    informer.start();
    const abort = new AbortController();
    const aborted = informer.whenSynced(abort.signal);
    abort.abort(new Error('gave up'));
    await assert.rejects(aborted, /gave up/);
    const stopped = informer.whenSynced();
    informer.stop();
    await assert.rejects(stopped, /was stopped/);
    assert.throws(() => informer.start(), /was stopped/);
  });

  it('tells when it reached a resourceVersion: by an event, a bookmark or a sync; never before its store has it', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('10', [object('a', '10')]);
    const informer = new Informer(transport, ConfigMaps);
    assert.equal(informer.reached('10'), false, 'nothing before the first sync');
    informer.start();
    await informer.whenSynced();
    assert.equal(informer.resourceVersion, '10');
    assert.equal(informer.reached('9'), true);
    assert.equal(informer.reached('11'), false);
    assert.equal(informer.reached('not-a-number'), true, 'no order to wait on');

    const byEvent = informer.whenReached('12');
    const byBookmark = informer.whenReached('20');
    const settled: string[] = [];
    void byEvent.then(() => settled.push(`12, store has b: ${informer.get('ns/b') !== undefined}`));
    void byBookmark.then(() => settled.push('20'));
    const stream = await transport.watchNumber(0);
    stream.push('ADDED', object('b', '11'));
    await flush();
    assert.deepEqual(settled, [], '11 is not 12');
    stream.push('ADDED', object('c', '13')); // past 12 without an event at it (another object's)
    stream.push('BOOKMARK', { kind: 'ConfigMap', metadata: { resourceVersion: '25' } });
    await flush();
    assert.deepEqual(settled, ['12, store has b: true', '20']);

    const later = informer.whenReached('30');
    const abort = new AbortController();
    const cut = informer.whenReached('40', abort.signal);
    abort.abort(new Error('gave up'));
    await assert.rejects(cut, /gave up/);
    informer.stop();
    await assert.rejects(later, /was stopped/);
  });

  it('resyncs: every cached object again as an update with old === object, each period jittered by up to 10 %', async () => {
    const clock = new ManualClock();
    const transport = new FakeWatchTransport();
    transport.onList = () => list('1', [object('a', '1'), object('b', '1')]);
    const informer = new Informer(transport, ConfigMaps, { clock, resyncMs: 30_000 });
    const updates: InformerEvent<KubeObject>[] = [];
    informer.events$.subscribe((e) => e.type === 'updated' && updates.push(e));
    informer.start();
    await informer.whenSynced();
    clock.advance(29_999);
    assert.equal(updates.length, 0, 'never before the period');
    clock.advance(3_001); // 33 s: the period plus its largest jitter
    assert.equal(updates.length, 2);
    assert.ok(updates.every((e) => e.old === e.object));
    clock.advance(33_000);
    assert.equal(updates.length, 4);
    informer.stop();
    clock.advance(30_000);
    assert.equal(updates.length, 4);
  });
});

describe('InformerCache', () => {
  it('shares one informer and one watch per resource and selector, and stops it when the last holder releases', async () => {
    const transport = new FakeWatchTransport();
    const cache = new InformerCache(transport);
    const first = cache.acquire(ConfigMaps, { namespace: 'ns' });
    const second = cache.acquire(ConfigMaps, { namespace: 'ns' });
    const labelled = cache.acquire(ConfigMaps, { namespace: 'ns', labelSelector: 'app=web' });
    assert.equal(first.informer, second.informer);
    assert.notEqual(first.informer, labelled.informer);
    await first.informer.whenSynced();
    await labelled.informer.whenSynced();
    assert.equal(transport.streams.length, 2);
    assert.equal(transport.lists.length, 2);

    first.release();
    first.release(); // a second release of one handle counts once
    await flush();
    assert.equal(transport.streams[0]!.closed, false, 'still held by the second holder');
    second.release();
    await flush();
    assert.equal(transport.streams[0]!.closed, true);
    assert.deepEqual(cache.all(), [labelled.informer]);

    const again = cache.acquire(ConfigMaps, { namespace: 'ns' });
    assert.notEqual(again.informer, first.informer, 'a fresh informer after the last release');
    cache.stopAll();
    await flush();
    assert.ok(transport.streams.every((s) => s.closed));
    again.release(); // harmless after stopAll
  });

  it('finds a synced informer without selectors that covers a namespace, for cache reads', async () => {
    const transport = new FakeWatchTransport();
    const cache = new InformerCache(transport);
    const nodes = cache.acquire(Nodes, { namespace: 'ignored-for-cluster-scoped' });
    assert.equal(cache.find(Nodes), undefined, 'not synced yet');
    await nodes.informer.whenSynced();
    assert.equal(cache.find(Nodes), nodes.informer);
    const inNs = cache.acquire(ConfigMaps, { namespace: 'ns' });
    const selected = cache.acquire(ConfigMaps, { labelSelector: 'a=b' });
    await Promise.all([inNs.informer.whenSynced(), selected.informer.whenSynced()]);
    assert.equal(cache.find(ConfigMaps, 'ns'), inNs.informer);
    assert.equal(cache.find(ConfigMaps, 'elsewhere'), undefined);
    assert.equal(cache.find(ConfigMaps), undefined, 'a label-selected informer holds only part of the kind');
    const all = cache.acquire(ConfigMaps);
    await all.informer.whenSynced();
    assert.equal(cache.find(ConfigMaps, 'elsewhere'), all.informer);
    assert.deepEqual(cache.readersOf(ConfigMaps, 'ns'), [all.informer, inNs.informer], 'each may serve a read of ns');
    assert.deepEqual(cache.readersOf(ConfigMaps), [all.informer]);
    assert.deepEqual(cache.readersOf(Nodes, 'x'), [nodes.informer]);
    cache.stopAll();
  });
});
