import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type KubeObject, ManualClock } from '@nestor/core';
import {
  FakeWatchTransport,
  flush,
  object,
  ConfigMaps,
  fakeList as list,
} from '../../test-support/fake-watch-transport.js';
import { Informer, OWNER_INDEX, type InformerEvent } from './informer.js';
import { InformerCache } from './informer-cache.js';
import { replayThenFollow } from '../controller/event-sources.js';

/** A child of owner `o` (uid `u`) with data, as an owned ConfigMap is. */
const child = (name: string, rv: string, owner = 'o') => ({
  ...object(name, rv, {
    labels: { app: 'x' },
    annotations: { big: 'y'.repeat(100) },
    ownerReferences: [
      { apiVersion: 'example.com/v1', kind: 'Widget', name: owner, uid: `u-${owner}`, controller: true },
    ],
  }),
  data: { payload: 'z'.repeat(100) },
});

function record(informer: Informer<KubeObject>): string[] {
  const seen: string[] = [];
  informer.events$.subscribe((event: InformerEvent<KubeObject>) => {
    const data = (event.object as { data?: unknown }).data ? ' whole' : ' skeleton';
    const old = event.old ? ` old ${event.old.metadata?.resourceVersion}${'data' in event.old ? ' whole' : ''}` : '';
    seen.push(`${event.type} ${event.object.metadata?.name}${data}${old}`);
  });
  return seen;
}

describe('Informer with eventsOnly', () => {
  it('emits whole objects, keeps a skeleton of each, and maps old objects and a resync’s deletions from it', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('10', [child('a', '1'), child('b', '2')]);
    const clock = new ManualClock();
    const informer = new Informer(transport, ConfigMaps, { eventsOnly: true, clock, random: () => 0 });
    const seen = record(informer);
    informer.start();
    await informer.whenSynced();
    assert.equal(informer.mode, 'events');
    assert.deepEqual(informer.get('ns/a'), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'a',
        namespace: 'ns',
        resourceVersion: '1',
        generation: undefined,
        labels: { app: 'x' },
        ownerReferences: child('a', '1').metadata!.ownerReferences,
      },
    });
    assert.deepEqual(
      informer.byIndex(OWNER_INDEX, 'u-o').map((o) => o.metadata?.name),
      ['a', 'b'],
    );
    const [a, b] = [informer.get('ns/a')!.metadata!, informer.get('ns/b')!.metadata!];
    assert.equal(a.ownerReferences, b.ownerReferences, 'children of one owner share one copy of the references');
    assert.equal(a.labels, b.labels, 'and of equal labels');
    const stream = await transport.watchNumber(0);
    stream.push('MODIFIED', child('a', '11', 'p'));
    await flush();
    assert.deepEqual(
      informer.byIndex(OWNER_INDEX, 'u-p').map((o) => o.metadata?.name),
      ['a'],
      'the owner index follows the skeletons',
    );
    // The watch breaks with 410 Gone: the relist finds b deleted, and emits its skeleton.
    transport.onList = () => list('20', [child('a', '11', 'p')]);
    stream.push('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' });
    await flush();
    clock.advance(800);
    await transport.watchNumber(1);
    assert.equal(informer.resourceVersion, '20');
    assert.deepEqual(seen, [
      'added a whole',
      'added b whole',
      'updated a whole old 1',
      'deleted b skeleton', // no event carried it: what the store kept
    ]);
    informer.stop();
  });

  it('keeps whole objects from keepObjects() on: a consistent list replaces the skeletons, emitting only what changed', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('10', [child('a', '1'), child('b', '2'), child('c', '3')]);
    const informer = new Informer(transport, ConfigMaps, { eventsOnly: true });
    const seen = record(informer);
    informer.start();
    await informer.whenSynced();
    informer.byIndex(OWNER_INDEX, 'u-o'); // an index built over skeletons
    const first = await transport.watchNumber(0);
    // Meanwhile b changed and c went: the consistent list shows it.
    transport.onList = () => list('30', [child('a', '1'), child('b', '25'), child('d', '26')]);
    const filled = informer.keepObjects();
    assert.equal(informer.mode, 'events', 'until the list is in');
    const order: string[] = [];
    await Promise.all([
      filled.then(() => order.push('filled')),
      informer.whenSynced().then(() => order.push('synced')),
    ]);
    assert.deepEqual(order, ['filled', 'synced'], 'whenSynced waited for the objects');
    assert.equal(informer.mode, 'objects');
    assert.equal(first.closed, true, 'the skeletons’ watch was stopped');
    assert.equal(transport.lists.length, 2);
    assert.notEqual(transport.lists[1]!.resourceVersion, '0', 'not from the watch cache: no older than what it saw');
    assert.deepEqual((informer.get('ns/a') as { data?: unknown }).data, { payload: 'z'.repeat(100) });
    assert.ok(informer.list().every((o) => 'data' in o && o.metadata?.annotations?.big));
    assert.deepEqual(seen.slice(2 + 1), ['updated b whole old 2', 'added d whole', 'deleted c skeleton']);
    assert.deepEqual(
      informer.byIndex(OWNER_INDEX, 'u-o').map((o) => 'data' in o),
      [true, true, true],
      'the index is built again over the objects',
    );
    const second = await transport.watchNumber(1);
    assert.equal(second.query.resourceVersion, '30');
    second.push('MODIFIED', child('a', '31'));
    await flush();
    assert.equal(seen.at(-1), 'updated a whole old 1 whole', 'an update’s old object is whole now');
    assert.equal(informer.synced, true);
    await informer.keepObjects(); // at once
    informer.stop();
  });
});

describe('InformerCache, kinds watched for events only', () => {
  it('serves no read from a skeleton until a read asks: then fills it once, and serves it from then on', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('10', [child('a', '1')]);
    const cache = new InformerCache(transport);
    const held = cache.acquire(ConfigMaps, { eventsOnly: true, cacheOnRead: true });
    const never = cache.acquire(ConfigMaps, { namespace: 'other', eventsOnly: true });
    await Promise.all([held.informer.whenSynced(), never.informer.whenSynced()]);
    assert.equal(held.informer.mode, 'events');
    assert.equal(cache.find(ConfigMaps, 'ns'), undefined);
    assert.deepEqual(cache.readersOf(ConfigMaps, 'ns'), [], 'an events-only informer serves no read: none to wait for');
    const reads = [cache.whenReadable(ConfigMaps, 'ns')!, cache.whenReadable(ConfigMaps)!];
    const informers = await Promise.all(reads);
    assert.deepEqual(informers, [held.informer, held.informer]);
    assert.equal(held.informer.mode, 'objects');
    await flush();
    assert.equal(cache.find(ConfigMaps, 'ns'), held.informer);
    assert.deepEqual(cache.readersOf(ConfigMaps, 'ns'), [held.informer]);
    assert.equal(transport.lists.length, 3, 'one list each, and one to fill');
    assert.equal(cache.whenReadable(ConfigMaps, 'ns'), undefined, 'served by find now');
    cache.stopAll();
  });

  it('has nothing to fill for a kind kept for good as skeletons, or selected', async () => {
    const transport = new FakeWatchTransport();
    const cache = new InformerCache(transport);
    cache.acquire(ConfigMaps, { namespace: 'ns', eventsOnly: true });
    cache.acquire(ConfigMaps, { labelSelector: 'shard=a', eventsOnly: true, cacheOnRead: true });
    await flush();
    assert.equal(cache.whenReadable(ConfigMaps, 'ns'), undefined);
    assert.equal(cache.whenReadable(ConfigMaps), undefined);
    cache.stopAll();
  });

  it('shares one informer between a holder of skeletons and one of objects: it keeps the objects', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('10', [child('a', '1')]);
    const cache = new InformerCache(transport);
    const events = cache.acquire(ConfigMaps, { namespace: 'ns', eventsOnly: true });
    await events.informer.whenSynced();
    await transport.watchNumber(0);
    const objects = cache.acquire(ConfigMaps, { namespace: 'ns' });
    assert.equal(objects.informer, events.informer);
    await objects.informer.whenSynced(); // waits for the objects
    assert.equal(objects.informer.mode, 'objects');
    assert.ok('data' in objects.informer.get('ns/a')!);
    const later = cache.acquire(ConfigMaps, { namespace: 'ns', eventsOnly: true });
    assert.equal(later.informer.mode, 'objects', 'a skeleton holder is served by the objects');
    await transport.watchNumber(1);
    await flush();
    assert.deepEqual(
      transport.streams.map((s) => s.closed),
      [true, false],
      'one watch: the skeletons’ one stopped',
    );
    await flush();
    assert.equal(cache.find(ConfigMaps, 'ns'), events.informer);
    events.release();
    objects.release();
    later.release();
    assert.equal(cache.find(ConfigMaps, 'ns'), undefined);
    cache.stopAll();
  });

  it('replays whole objects to a holder of objects that joins a holder of skeletons', async () => {
    // KubeconfigSecrets (objects) after a @Watches of the same Secrets (skeletons): its
    // replay of the store, taken while the fill ran, gave skeletons, without data, and the
    // fill emitted nothing for them, since none had changed.
    const transport = new FakeWatchTransport();
    transport.onList = () => list('10', [child('a', '1'), child('b', '2')]);
    const cache = new InformerCache(transport);
    const events = cache.acquire(ConfigMaps, { namespace: 'ns', eventsOnly: true });
    await events.informer.whenSynced();
    const objects = cache.acquire(ConfigMaps, { namespace: 'ns' });
    const seen: string[] = [];
    const subscription = replayThenFollow(objects.informer).subscribe(({ type, object }) =>
      seen.push(`${type} ${object.metadata?.name}${'data' in object ? ' whole' : ' skeleton'}`),
    );
    await objects.informer.whenSynced();
    await flush();
    assert.deepEqual(seen, ['added a whole', 'added b whole']);
    subscription.unsubscribe();
    cache.stopAll();
  });

  it('keeps the objects of a kind once a field index is declared on it: an index of skeletons files nothing', async () => {
    const transport = new FakeWatchTransport();
    transport.onList = () => list('10', [child('a', '1'), child('b', '2', 'p')]);
    const cache = new InformerCache(transport);
    const events = cache.acquire(ConfigMaps, { namespace: 'ns', eventsOnly: true });
    await events.informer.whenSynced();
    const initial = (o: KubeObject) => (o as { data?: { payload?: string } }).data?.payload?.slice(0, 1);
    cache.indexField(ConfigMaps, 'payload', initial);
    assert.equal(cache.byField(ConfigMaps, 'payload', 'z', 'ns'), undefined, 'not from skeletons while it fills');
    await events.informer.whenSynced();
    assert.equal(events.informer.mode, 'objects');
    assert.deepEqual(
      cache.byField(ConfigMaps, 'payload', 'z', 'ns')?.map((o) => o.metadata?.name),
      ['a', 'b'],
    );
    cache.stopAll();
  });

  it('says after a bound when the objects could not be listed', async () => {
    const transport = new FakeWatchTransport();
    const cache = new InformerCache(transport);
    const held = cache.acquire(ConfigMaps, { eventsOnly: true, cacheOnRead: true });
    await held.informer.whenSynced();
    transport.onList = () => new Error('forbidden');
    const abort = new AbortController();
    const read = cache.whenReadable(ConfigMaps, 'ns', abort.signal)!;
    abort.abort(new Error('the run ended'));
    await assert.rejects(read, /the run ended/);
    cache.stopAll();
  });
});
