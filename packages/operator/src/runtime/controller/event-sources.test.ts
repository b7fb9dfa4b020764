import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject, ObjectRef } from '@nestor/core';
import { waitFor } from '@nestor/testing';
import { Observable, Subject, firstValueFrom, take, toArray } from 'rxjs';
import { Backoff } from '../backoff.js';
import {
  externalKeys,
  MAPPER_TIMEOUT_MS,
  MAPPERS_IN_FLIGHT,
  ownedKeys,
  primaryKeys,
  watchedKeys,
  type StreamFault,
} from './event-sources.js';
import { WriteEchoes } from '../../client/write-echoes.js';
import type { Informer } from '../cache/informer.js';
import type { ResourceEvent } from './predicates.js';

/** An informer as event sources see it: current objects and live events. */
function fakeInformer(objects: KubeObject[] = []) {
  const events$ = new Subject<ResourceEvent<KubeObject>>();
  return { informer: { events$, list: () => objects } as unknown as Informer<KubeObject>, events$ };
}
const cm = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', labels },
});

describe('event sources', () => {
  it('skips an event whose predicate throws, reports it, and keeps the stream', () => {
    const { informer, events$ } = fakeInformer();
    const faults: StreamFault[] = [];
    const keys: string[] = [];
    const poisoned = (event: ResourceEvent<KubeObject>) => {
      if (event.object.metadata?.labels?.['bad']) throw new Error('boom');
      return true;
    };
    const subscription = primaryKeys('configmaps', informer, [poisoned], (f) => faults.push(f)).subscribe((k) =>
      keys.push(typeof k === 'string' ? k : `echo ${k.key}`),
    );
    events$.next({ type: 'added', object: cm('bad', { bad: 'yes' }) });
    events$.next({ type: 'added', object: cm('good') });
    assert.deepEqual(keys, ['ns/good']);
    assert.equal(faults.length, 1);
    assert.equal(faults[0]!.kind, 'predicate');
    assert.equal(faults[0]!.stream, 'configmaps');
    assert.equal(faults[0]!.object?.metadata?.name, 'bad');
    assert.equal(subscription.closed, false);
  });

  it('requests an update that echoes the controller’s own write as an Echo, and every other event as a key', () => {
    const echoes = new WriteEchoes();
    echoes.follow('c', 'configmaps');
    echoes.follow('c', 'secrets');
    const check = (kind: string) => (key: string, object: KubeObject) =>
      echoes.take('c', kind, key, object.metadata?.resourceVersion);
    const at = (object: KubeObject, resourceVersion: string, extra: object = {}): KubeObject => ({
      ...object,
      metadata: { ...object.metadata, resourceVersion, ...extra },
    });
    const primary = fakeInformer();
    const children = fakeInformer();
    const requested: string[] = [];
    const show = (k: string | { key: string }) => requested.push(typeof k === 'string' ? k : `echo ${k.key}`);
    const subscriptions = [
      primaryKeys('configmaps', primary.informer, [], () => {}, check('configmaps')).subscribe(show),
      ownedKeys(
        children.informer,
        { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
        check('secrets'),
      ).subscribe(show),
    ];
    const owner = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: 'u', controller: true }];
    echoes.record('c', 'configmaps', 'ns/a', '5');
    primary.events$.next({ type: 'updated', object: at(cm('a'), '5') }); // its own status write
    echoes.record('c', 'configmaps', 'ns/a', '7');
    primary.events$.next({ type: 'updated', object: at(cm('a'), '8') }); // someone wrote after it
    primary.events$.next({ type: 'updated', object: at(cm('a'), '7') }); // forgotten with the last event
    echoes.record('c', 'secrets', 'ns/a-child', '9');
    children.events$.next({ type: 'added', object: at(cm('a-child'), '9', { ownerReferences: owner }) });
    children.events$.next({ type: 'updated', object: at(cm('a-child'), '10', { ownerReferences: owner }) });
    assert.deepEqual(requested, ['echo ns/a', 'ns/a', 'ns/a', 'echo ns/a', 'ns/a']);
    assert.equal(echoes.pending, 0, 'each write forgotten with its object’s next event');
    // Not followed (a kind the controller does not watch): nothing kept.
    echoes.record('c', 'deployments.apps', 'ns/x', '1');
    echoes.record('other', 'configmaps', 'ns/x', '1');
    assert.equal(echoes.pending, 0);
    subscriptions.forEach((s) => s.unsubscribe());
  });

  it('skips what a mapper throws on and what is not an object reference', () => {
    const { informer, events$ } = fakeInformer();
    const faults: StreamFault[] = [];
    const keys: string[] = [];
    const watch = {
      resource: { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
      map: (object: KubeObject) => {
        if (object.metadata?.name === 'throws') throw new Error('mapper failed');
        if (object.metadata?.name === 'bad-refs') return [{ name: '' }, null, { name: 'ok' }] as unknown as ObjectRef[];
        return { namespace: 'ns', name: `for-${object.metadata?.name}` };
      },
    };
    watchedKeys('watches secrets', informer, watch, (f) => faults.push(f)).subscribe((k) => keys.push(k));
    for (const name of ['throws', 'bad-refs', 'fine']) events$.next({ type: 'added', object: cm(name) });
    assert.deepEqual(keys, ['ok', 'ns/for-fine']);
    assert.deepEqual(
      faults.map((f) => f.kind),
      ['mapper', 'invalid-request', 'invalid-request'],
    );
    assert.match(faults[1]!.error.message, /is not a request: emit \{ name, namespace\? \}/);
  });

  it('awaits an async mapper, at most MAPPERS_IN_FLIGHT at once, and reports one that rejects or never answers', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { informer, events$ } = fakeInformer();
    const faults: StreamFault[] = [];
    const keys: string[] = [];
    const pending: Array<() => void> = [];
    let inFlight = 0;
    let most = 0;
    const watch = {
      resource: { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
      map: async (object: KubeObject) => {
        const name = object.metadata!.name!;
        if (name === 'rejects') throw new Error('cache read failed');
        if (name === 'hangs') return new Promise<never>(() => {});
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise<void>((resolve) => pending.push(resolve));
        inFlight--;
        return { namespace: 'ns', name: `for-${name}` };
      },
    };
    watchedKeys('watches secrets', informer, watch, (f) => faults.push(f)).subscribe((k) => keys.push(k));
    events$.next({ type: 'added', object: cm('rejects') });
    events$.next({ type: 'added', object: cm('hangs') });
    for (let i = 0; i < 20; i++) events$.next({ type: 'added', object: cm(`s${i}`) });
    await flushPromises();
    assert.equal(most, MAPPERS_IN_FLIGHT - 1, 'the hanging mapping holds one of the slots');
    while (pending.length) {
      pending.shift()!();
      await flushPromises();
    }
    assert.equal(keys.length, 20, 'every waiting event mapped in turn');
    assert.deepEqual(keys.slice(0, 2), ['ns/for-s0', 'ns/for-s1']);
    t.mock.timers.tick(MAPPER_TIMEOUT_MS);
    await flushPromises();
    assert.deepEqual(
      faults.map((f) => [f.kind, f.object?.metadata?.name, f.error.message]),
      [
        ['mapper', 'rejects', 'cache read failed'],
        ['mapper', 'hangs', `the mapper did not answer within ${MAPPER_TIMEOUT_MS} ms`],
      ],
    );
  });

  it('subscribes an external source again after it errors and after it completes', async () => {
    let subscriptions = 0;
    const source = new Observable<ObjectRef>((subscriber) => {
      subscriptions++;
      subscriber.next({ name: `n${subscriptions}` });
      if (subscriptions % 2) subscriber.error(new Error('down'));
      else subscriber.complete();
    });
    const faults: StreamFault[] = [];
    const keys = await firstValueFrom(
      externalKeys({ name: 'poller', stream: source }, (f) => faults.push(f), new Backoff({ initialMs: 1 })).pipe(
        take(4),
        toArray(),
      ),
    );
    assert.deepEqual(keys, ['n1', 'n2', 'n3', 'n4']);
    assert.deepEqual(
      faults.map((f) => f.kind),
      ['source-error', 'source-complete', 'source-error'],
    );
    assert.ok(faults.every((f) => f.stream === 'poller' && typeof f.retryInMs === 'number'));
  });

  it('backs off exponentially while a source keeps failing', async () => {
    const source = new Observable<ObjectRef>((subscriber) => subscriber.error(new Error('down')));
    const delays: number[] = [];
    const subscription = externalKeys(
      { name: 'poller', stream: source },
      (f) => delays.push(f.retryInMs!),
      new Backoff({ initialMs: 2, jitter: 0 }),
    ).subscribe();
    await waitFor(() => delays.length >= 4, { timeoutMs: 5_000 });
    subscription.unsubscribe();
    assert.deepEqual(delays.slice(0, 4), [2, 4, 8, 16]);
  });
});

/** Lets every settled promise's callbacks run (a few turns of the microtask queue). */
async function flushPromises(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
