import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, type KubeObject, ManualClock, ObjectTooDeepError } from '@nestor/core';
import {
  FakeWatchTransport,
  flush,
  object,
  ConfigMaps,
  fakeList as list,
} from '../../test-support/fake-watch-transport.js';
import { watch } from './watch.js';
import type { WatchEvent } from './watch-event.js';
import type { WatchErrorInfo, WatchOptions } from './watch-options.js';
import { createWatchStats } from './watch-stats.js';

function start(options: WatchOptions = {}) {
  const transport = new FakeWatchTransport();
  const clock = new ManualClock();
  const stats = createWatchStats();
  const errors: Array<{ error: Error; info: WatchErrorInfo }> = [];
  const events: WatchEvent<KubeObject>[] = [];
  const subscribe = () =>
    watch(transport, ConfigMaps, {
      clock,
      random: () => 0,
      stats,
      onError: (error, info) => errors.push({ error, info }),
      ...options,
    }).subscribe((event) => events.push(event));
  /** Event types and names since the last call, e.g. 'ADDED a'. */
  const taken = () =>
    events.splice(0).map((e) => (e.type === 'SYNCED' ? 'SYNCED' : `${e.type} ${e.object.metadata?.name}`));
  return { transport, clock, stats, errors, events, subscribe, taken };
}

const networkError = () =>
  KubeApiError.fromNetwork(
    { method: 'GET', path: '/api/v1/configmaps' },
    'https://k',
    Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
  );

describe('watch()', () => {
  it('lists page by page, then watches from the list resourceVersion with bookmarks and a randomized timeout', async () => {
    const t = start({ random: () => 0.5 });
    t.transport.onList = (q) =>
      q.continue ? list('10', [object('c', '9')]) : list('10', [object('a', '3'), object('b', '4')], 'next');
    const sub = t.subscribe();
    const stream = await t.transport.watchNumber(0);
    assert.deepEqual(t.taken(), ['ADDED a', 'ADDED b', 'ADDED c', 'SYNCED']);
    // The first list from the watch cache (resourceVersion 0); the token carries it on.
    assert.deepEqual(t.transport.lists, [
      { labelSelector: undefined, fieldSelector: undefined, resourceVersion: '0', limit: 500 },
      {
        labelSelector: undefined,
        fieldSelector: undefined,
        resourceVersion: undefined,
        resourceVersionMatch: undefined,
        limit: 500,
        continue: 'next',
      },
    ]);
    assert.equal(stream.query.watch, true);
    assert.equal(stream.query.allowWatchBookmarks, true);
    assert.equal(stream.query.resourceVersion, '10');
    assert.equal(stream.query.timeoutSeconds, 37, 'random in [25, 50) s');
    sub.unsubscribe();
  });

  it('fills in apiVersion and kind of list items, strips managedFields and transforms each object once', async () => {
    let transforms = 0;
    const t = start({
      transform: (o) => {
        transforms++;
        return Object.assign(o, { seen: true });
      },
    });
    t.transport.onList = () =>
      list('2', [{ metadata: { name: 'a', namespace: 'ns', resourceVersion: '1', managedFields: [{}] } }]);
    const sub = t.subscribe();
    const stream = await t.transport.watchNumber(0);
    stream.push('MODIFIED', object('a', '3', { managedFields: [{}] }));
    await flush();
    const [added, , modified] = t.events as Array<{ object: KubeObject }>;
    assert.deepEqual(added!.object, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'ns', resourceVersion: '1' },
      seen: true,
    });
    assert.equal(modified!.object.metadata?.managedFields, undefined);
    assert.equal(transforms, 2);
    sub.unsubscribe();
  });

  it('restarts a paginated list whose continue token expired, without repeating unchanged objects', async () => {
    const t = start();
    let expired = false;
    t.transport.onList = (q) => {
      if (!q.continue) return list('20', [object('a', '1'), object('b', '2')], 'p2');
      if (!expired)
        return (
          (expired = true),
          new KubeApiError(410, 'Expired', 'continue token expired', 'GET', '/api/v1/configmaps')
        );
      return list('20', [object('c', '3')]);
    };
    const sub = t.subscribe();
    await t.transport.watchNumber(0);
    assert.deepEqual(t.taken(), ['ADDED a', 'ADDED b', 'ADDED c', 'SYNCED']);
    assert.equal(t.transport.lists.length, 4);
    assert.equal(t.errors.length, 0);
    sub.unsubscribe();
  });

  it('emits watch events, follows bookmarks, and resumes at once from the last resourceVersion when the stream ends', async () => {
    const t = start();
    const sub = t.subscribe();
    const first = await t.transport.watchNumber(0);
    t.taken();
    first.push('ADDED', object('a', '11'));
    first.push('MODIFIED', object('a', '12'));
    first.push('BOOKMARK', { kind: 'ConfigMap', metadata: { resourceVersion: '15' } });
    first.end();
    const second = await t.transport.watchNumber(1);
    assert.deepEqual(t.taken(), ['ADDED a', 'MODIFIED a']);
    assert.equal(second.query.resourceVersion, '15');
    second.push('DELETED', object('a', '16'));
    await flush();
    assert.deepEqual(t.taken(), ['DELETED a']);
    assert.deepEqual([t.stats.restarts, t.stats.relists, t.stats.events, t.stats.bookmarks], [1, 0, 3, 1]);
    assert.equal(t.stats.resourceVersion, '16');
    assert.equal(t.transport.lists.length, 1, 'no relist');
    sub.unsubscribe();
  });

  it('reconnects after failures with backoff doubling from 800 ms, and waits as long as a Retry-After asks', async () => {
    const t = start();
    const sub = t.subscribe();
    (await t.transport.watchNumber(0)).push('BOOKMARK', { metadata: { resourceVersion: '7' } });
    t.transport.streams[0]!.fail(networkError());
    await flush();
    t.clock.advance(799);
    await flush();
    assert.equal(t.transport.streams.length, 1, 'still backing off');
    t.clock.advance(1);
    const second = await t.transport.watchNumber(1);
    assert.equal(second.query.resourceVersion, '7');
    second.fail(networkError());
    await flush();
    t.clock.advance(1600);
    const third = await t.transport.watchNumber(2);
    third.fail(KubeApiError.fromResponse({ method: 'GET', path: '/api/v1/configmaps' }, 429, 'busy', '5'));
    await flush();
    t.clock.advance(4999);
    await flush();
    assert.equal(t.transport.streams.length, 3);
    t.clock.advance(1);
    const fourth = await t.transport.watchNumber(3);
    // A 5xx with Retry-After (an API server shutting down) is waited out as long too.
    fourth.fail(KubeApiError.fromResponse({ method: 'GET', path: '/api/v1/configmaps' }, 503, 'going away', '10'));
    await flush();
    t.clock.advance(9999);
    await flush();
    assert.equal(t.transport.streams.length, 4, 'not at the backoff (6.4 s): at the 10 s asked');
    t.clock.advance(1);
    await t.transport.watchNumber(4);
    assert.deepEqual(
      t.errors.map((e) => [e.info.phase, e.info.attempt, e.info.retryInMs]),
      [
        ['watch', 1, 800],
        ['watch', 2, 1600],
        ['watch', 3, 5000],
        ['watch', 4, 10000],
      ],
    );
    assert.equal(t.stats.failures, 4);
    assert.match(t.stats.lastError!, /503/);
    assert.equal(t.transport.lists.length, 1);
    sub.unsubscribe();
  });

  it('retries an answer that says when at that time, not on the backoff, which it does not grow: up to ten with no event between', async () => {
    const t = start();
    const sub = t.subscribe();
    const busy = () => KubeApiError.fromResponse({ method: 'GET', path: '/api/v1/configmaps' }, 503, 'busy', '1');
    (await t.transport.watchNumber(0)).push('BOOKMARK', { metadata: { resourceVersion: '7' } });
    t.transport.streams[0]!.fail(networkError());
    let opened = 1;
    /** Fails the latest watch with `error`, then lets the clock run until the next one opens. */
    const failAndWait = async (error: Error) => {
      (await t.transport.watchNumber(opened - 1)).fail(error);
      await flush();
      t.clock.advance(t.errors.at(-1)!.info.retryInMs);
      await t.transport.watchNumber(opened++);
    };
    await flush();
    t.clock.advance(800);
    await t.transport.watchNumber(opened++);
    for (let i = 0; i < 11; i++) await failAndWait(busy());
    // An event: the server works again, so its next answer with a time is taken as asked again.
    t.transport.streams.at(-1)!.push('BOOKMARK', { metadata: { resourceVersion: '9' } });
    await flush();
    await failAndWait(busy());
    await failAndWait(networkError());
    assert.deepEqual(
      t.errors.map((e) => e.info.retryInMs),
      [800, ...Array<number>(10).fill(1000), 1600, 1000, 3200],
      'ten retries at the 1 s asked, the eleventh on the backoff (the next step after 800 ms), then 1 s again after an event; the backoff goes on from 1.6 s',
    );
    assert.equal(t.transport.streams.at(-1)!.query.resourceVersion, '9');
    assert.equal(t.transport.lists.length, 1);
    sub.unsubscribe();
  });

  it('relists after a 410 ERROR event and emits only what changed: MODIFIED, ADDED, DELETED with the last known object', async () => {
    const t = start();
    t.transport.onList = () => list('5', [object('a', '1'), object('b', '2'), object('c', '3')]);
    const sub = t.subscribe();
    const stream = await t.transport.watchNumber(0);
    const lastC = (t.events[2] as { object: KubeObject }).object;
    t.taken();
    t.transport.onList = () => list('30', [object('a', '1'), object('b', '20'), object('d', '25')]);
    stream.push('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 5 (26)' });
    await flush();
    t.clock.advance(800);
    const after = await t.transport.watchNumber(1);
    const events = t.events.splice(0);
    assert.deepEqual(
      events.map((e) => (e.type === 'SYNCED' ? e.type : `${e.type} ${e.object.metadata?.name}`)),
      ['MODIFIED b', 'ADDED d', 'DELETED c', 'SYNCED'],
    );
    assert.equal((events[2] as { object: KubeObject }).object, lastC, 'the same object, not a copy');
    assert.equal(after.query.resourceVersion, '30');
    assert.deepEqual(
      t.transport.lists.map((q) => [q.resourceVersion, q.resourceVersionMatch]),
      [
        ['0', undefined],
        ['5', 'NotOlderThan'],
      ],
      'the first list from the watch cache, the relist not older than where the watch ended (never back in time; the watch cache, as client-go)',
    );
    assert.equal(t.stats.relists, 1);
    assert.equal(t.errors.length, 0, '410 is routine, not an error');
    sub.unsubscribe();
  });

  it('relists when opening the watch answers HTTP 410', async () => {
    const t = start();
    const sub = t.subscribe();
    (await t.transport.watchNumber(0)).fail(new KubeApiError(410, 'Gone', 'gone', 'GET', '/api/v1/configmaps'));
    await flush();
    t.clock.advance(800);
    await t.transport.watchNumber(1);
    assert.equal(t.transport.lists.length, 2);
    assert.deepEqual(t.taken(), ['SYNCED', 'SYNCED']);
    sub.unsubscribe();
  });

  it('retries a failing list with backoff and never errors', async () => {
    const t = start();
    let calls = 0;
    t.transport.onList = () =>
      ++calls < 3
        ? KubeApiError.fromResponse({ method: 'GET', path: '/api/v1/configmaps' }, 403, 'forbidden')
        : list('1', []);
    const sub = t.subscribe();
    await flush();
    t.clock.advance(800);
    await flush();
    t.clock.advance(1600);
    await t.transport.watchNumber(0);
    assert.deepEqual(
      t.errors.map((e) => [e.info.phase, e.info.attempt]),
      [
        ['list', 1],
        ['list', 2],
      ],
    );
    assert.equal(t.stats.failures, 0, 'reset by the successful list');
    sub.unsubscribe();
  });

  it('reconnects a watch that received nothing, bookmarks included, for stallTimeoutMs', async () => {
    const t = start({ stallTimeoutMs: 1000 });
    const sub = t.subscribe();
    const stream = await t.transport.watchNumber(0);
    t.clock.advance(500);
    stream.push('BOOKMARK', { metadata: { resourceVersion: '9' } });
    await flush();
    t.clock.advance(900);
    await flush();
    assert.equal(stream.closed, false, 'the bookmark kept it alive');
    t.clock.advance(100);
    await flush();
    assert.equal(stream.closed, true);
    assert.equal(t.errors[0]?.error.name, 'WatchStalledError');
    t.clock.advance(800);
    const next = await t.transport.watchNumber(1);
    assert.equal(next.query.resourceVersion, '9');
    sub.unsubscribe();
  });

  it('by default, reconnects a watch whose server-side end is 10 s overdue: within a minute of its last data', async () => {
    const t = start({ random: () => 0.5 }); // timeoutSeconds 37
    const sub = t.subscribe();
    const stream = await t.transport.watchNumber(0);
    t.clock.advance(46_900);
    await flush();
    assert.equal(stream.closed, false, 'the server may still end it');
    t.clock.advance(100);
    await flush();
    assert.equal(stream.closed, true, 'silent 47 s: dead');
    assert.equal(t.errors[0]?.error.name, 'WatchStalledError');
    sub.unsubscribe();
  });

  it("over HTTP/2, whose PING finds dead connections, asks for client-go's watch lengths, and still reconnects a silent watch within 70 s", async () => {
    const t = start({ random: () => 0.5 });
    t.transport.checksLiveness = true;
    const sub = t.subscribe();
    const stream = await t.transport.watchNumber(0);
    assert.equal(stream.query.timeoutSeconds, 450, 'random in [300, 600) s');
    // The bookmark every minute still bounds the silence, whatever the protocol.
    t.clock.advance(69_900);
    await flush();
    assert.equal(stream.closed, false);
    t.clock.advance(100);
    await flush();
    assert.equal(stream.closed, true, 'silent 70 s: dead');
    assert.equal(t.errors[0]?.error.name, 'WatchStalledError');
    sub.unsubscribe();
  });

  it('unsubscribing aborts the stream in flight and leaves no timer behind', async () => {
    const t = start({ stallTimeoutMs: 1000 });
    const sub = t.subscribe();
    const stream = await t.transport.watchNumber(0);
    sub.unsubscribe();
    await flush();
    assert.equal(stream.closed, true);
    assert.equal(t.clock.pendingTimers, 0);
    t.clock.advance(60_000);
    await flush();
    assert.equal(t.transport.streams.length, 1);
  });

  it('unsubscribing during a backoff cancels the pending retry', async () => {
    const t = start();
    const sub = t.subscribe();
    (await t.transport.watchNumber(0)).fail(networkError());
    await flush();
    assert.equal(t.clock.pendingTimers, 1);
    sub.unsubscribe();
    await flush();
    assert.equal(t.clock.pendingTimers, 0);
  });
});

const serverError = (code: number, message: string, extra: object = {}) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  message,
  ...extra,
});

describe('watch() under faults other than 410', () => {
  it('resumes from the last resourceVersion after an ERROR event, and relists not older than it after a second one there', async () => {
    const t = start();
    t.transport.onList = () => list('5', [object('a', '1')]);
    const sub = t.subscribe();
    const first = await t.transport.watchNumber(0);
    first.push('MODIFIED', object('a', '7'));
    // The etcd3 watcher's InternalError when its etcd watch fails: an isolated one, at once.
    first.push('ERROR', serverError(500, 'etcdserver: no leader', { reason: 'InternalError' }));
    const second = await t.transport.watchNumber(1);
    assert.equal(second.query.resourceVersion, '7', 'resumed, not relisted');
    second.push('BOOKMARK', { metadata: { resourceVersion: '9' } });
    second.push('ERROR', serverError(500, 'etcdserver: no leader', { reason: 'InternalError' }));
    await flush();
    t.clock.advance(800);
    const third = await t.transport.watchNumber(2);
    assert.equal(third.query.resourceVersion, '9', 'progress between the two: resumed again');
    assert.equal(t.transport.lists.length, 1);
    // Twice at resourceVersion 9 with nothing between: the resourceVersion may be the trouble.
    t.transport.onList = () => list('12', [object('a', '11')]);
    third.push('ERROR', serverError(500, 'etcdserver: no leader'));
    await flush();
    t.clock.advance(1600);
    const fourth = await t.transport.watchNumber(3);
    assert.equal(t.transport.lists.length, 2, 'relisted');
    // As client-go's reflector: a state not older than where it broke, from the watch cache,
    // not every object read again from etcd.
    assert.deepEqual(
      [t.transport.lists[1]!.resourceVersion, t.transport.lists[1]!.resourceVersionMatch],
      ['9', 'NotOlderThan'],
    );
    assert.equal(fourth.query.resourceVersion, '12');
    assert.deepEqual(t.taken(), ['ADDED a', 'SYNCED', 'MODIFIED a', 'MODIFIED a', 'SYNCED']);
    assert.deepEqual(
      t.errors.map((e) => [e.info.phase, e.info.attempt, e.info.retryInMs]),
      [
        ['watch', 1, 0],
        ['watch', 1, 800],
        ['watch', 2, 1600],
      ],
      'an etcd hiccup resumes at once, a second within 10 s waits; an ERROR event is no sign of a working watch (a bookmark is): the backoff goes on',
    );
    sub.unsubscribe();
  });

  for (const [what, status] of [
    [
      '410 with reason Gone (servers before 1.18)',
      serverError(410, 'too old resource version: 5 (26)', { reason: 'Gone' }),
    ],
    ['500 with the watch cache’s message', serverError(500, 'too old resource version: 5 (26)')],
    [
      '500 with etcd’s compaction error passed through',
      serverError(500, 'etcdserver: mvcc: required revision has been compacted', { reason: 'InternalError' }),
    ],
  ] as const) {
    it(`relists at once after "too old" said as ${what}`, async () => {
      const t = start();
      const sub = t.subscribe();
      const first = await t.transport.watchNumber(0);
      first.push('ERROR', status);
      await flush();
      t.clock.advance(800);
      await t.transport.watchNumber(1);
      assert.equal(t.transport.lists.length, 2);
      assert.equal(t.stats.relists, 1);
      sub.unsubscribe();
    });
  }

  it('resumes at once after an isolated etcd hiccup in the stream, never after a 500 answering the WATCH itself', async () => {
    const t = start();
    const sub = t.subscribe();
    const noLeader = () => serverError(500, 'etcdserver: no leader', { reason: 'InternalError' });
    const first = await t.transport.watchNumber(0);
    first.push('BOOKMARK', { metadata: { resourceVersion: '3' } });
    first.push('ERROR', noLeader());
    const second = await t.transport.watchNumber(1);
    assert.equal(second.query.resourceVersion, '3', 'resumed at once where it was');
    // The WATCH request answered 500: no watch was served, so no hiccup of one.
    second.fail(KubeApiError.fromResponse({ method: 'GET', path: '/api/v1/configmaps', watch: true }, 500, noLeader()));
    await flush();
    t.clock.advance(800);
    const third = await t.transport.watchNumber(2);
    third.push('BOOKMARK', { metadata: { resourceVersion: '4' } });
    // Ten quiet seconds later, a hiccup is isolated again.
    t.clock.advance(10_001);
    third.push('ERROR', noLeader());
    const fourth = await t.transport.watchNumber(3);
    assert.equal(fourth.query.resourceVersion, '4');
    assert.deepEqual(
      t.errors.map((e) => e.info.retryInMs),
      [0, 800, 0],
    );
    assert.equal(t.transport.lists.length, 1, 'never relisted');
    sub.unsubscribe();
  });

  it('reads an ERROR event whose object is no Status as a 500 naming it, and goes on', async () => {
    const t = start();
    const sub = t.subscribe();
    const first = await t.transport.watchNumber(0);
    first.push('BOOKMARK', { metadata: { resourceVersion: '3' } });
    first.push('ERROR', 'upstream connect error or disconnect/reset before headers' as unknown as object);
    await flush();
    t.clock.advance(800);
    const second = await t.transport.watchNumber(1);
    assert.equal(second.query.resourceVersion, '3');
    second.push('ERROR', null as unknown as object);
    await flush();
    t.clock.advance(1600);
    await t.transport.watchNumber(2);
    assert.equal(t.transport.lists.length, 2, 'the second at the same resourceVersion relisted');
    assert.deepEqual(
      t.errors.map((e) => e.error.message),
      [
        'GET /api/v1/configmaps: HTTP 500 InternalError: an ERROR event whose object is not a Status (string)',
        'GET /api/v1/configmaps: HTTP 500 InternalError: an ERROR event whose object is not a Status (null)',
      ],
    );
    sub.unsubscribe();
  });

  it('relists with a consistent read when the server said it is behind the resourceVersion, or the relist from it failed', async () => {
    const t = start();
    let lists = 0;
    // The third LIST (the relist from resourceVersion 1) finds it compacted.
    t.transport.onList = () =>
      ++lists === 3
        ? KubeApiError.fromResponse({ method: 'GET', path: '/api/v1/configmaps' }, 410, {
            kind: 'Status',
            code: 410,
            reason: 'Expired',
            message: 'too old resource version: 1 (5)',
          })
        : list('1', []);
    const sub = t.subscribe();
    const first = await t.transport.watchNumber(0);
    first.push('BOOKMARK', { metadata: { resourceVersion: '3' } });
    const tooLarge = () =>
      serverError(504, 'Too large resource version: 3, current: 2', {
        reason: 'Timeout',
        details: { retryAfterSeconds: 1 },
      });
    first.push('ERROR', tooLarge());
    await flush();
    t.clock.advance(1000);
    const second = await t.transport.watchNumber(1);
    second.push('ERROR', tooLarge());
    // The relist is a consistent read: the server's second is for the resourceVersion it is behind.
    const third = await t.transport.watchNumber(2);
    // Broken twice at the list's resourceVersion by plain 500s: a relist from it.
    third.push('ERROR', serverError(500, 'etcdserver: no leader'));
    await flush();
    t.clock.advance(800);
    const fourth = await t.transport.watchNumber(3);
    fourth.push('ERROR', serverError(500, 'etcdserver: no leader'));
    await flush();
    t.clock.advance(1600);
    await t.transport.watchNumber(4);
    assert.deepEqual(
      t.transport.lists.map((q) => [q.resourceVersion, q.resourceVersionMatch]),
      [
        ['0', undefined],
        // Behind 3: a LIST not older than 3 would wait for it, as the watch did.
        [undefined, undefined],
        ['1', 'NotOlderThan'],
        // 410 to that one: a consistent read, at once.
        [undefined, undefined],
      ],
    );
    assert.deepEqual(
      t.errors.slice(0, 2).map((e) => e.info.retryInMs),
      [1000, 0],
      'the resume waits the second asked; the consistent relist goes at once',
    );
    sub.unsubscribe();
  });

  it('an event without an object’s name breaks the stream like an ERROR event, never the loop', async () => {
    const t = start();
    const sub = t.subscribe();
    const first = await t.transport.watchNumber(0);
    first.push('ADDED', {});
    await flush();
    t.clock.advance(800);
    await t.transport.watchNumber(1);
    assert.match(t.errors[0]!.error.message, /ADDED event without an object's name/);
    assert.deepEqual(t.taken(), ['SYNCED']);
    sub.unsubscribe();
  });

  it('backs off from 800 ms again once the watch has worked for 30 s since its last retry', async () => {
    const t = start();
    const sub = t.subscribe();
    (await t.transport.watchNumber(0)).fail(networkError());
    await flush();
    t.clock.advance(800);
    (await t.transport.watchNumber(1)).fail(networkError());
    await flush();
    t.clock.advance(1600);
    const third = await t.transport.watchNumber(2);
    t.clock.advance(29_000); // worked 29 s: a failure now still doubles
    third.fail(networkError());
    await flush();
    t.clock.advance(3200);
    const fourth = await t.transport.watchNumber(3);
    t.clock.advance(30_001);
    fourth.fail(networkError());
    await flush();
    assert.deepEqual(
      t.errors.map((e) => e.info.retryInMs),
      [800, 1600, 3200, 800],
    );
    sub.unsubscribe();
  });

  it('a LIST that fails after some pages resumes at the page that failed, into the same sync', async () => {
    const t = start({ firstListFromCache: false });
    let failures = 0;
    t.transport.onList = (q) => {
      if (!q.continue) return list('20', [object('a', '1')], 'p2');
      if (q.continue === 'p2') return list('20', [object('b', '2')], 'p3');
      if (failures++ === 0) return networkError(); // the relay cut page 3
      return list('20', [object('c', '3')]);
    };
    const sub = t.subscribe();
    await flush();
    t.clock.advance(800);
    const stream = await t.transport.watchNumber(0);
    assert.deepEqual(
      t.transport.lists.map((q) => q.continue),
      [undefined, 'p2', 'p3', 'p3'],
      'page 3 asked for again, not the list',
    );
    assert.deepEqual(t.taken(), ['ADDED a', 'ADDED b', 'ADDED c', 'SYNCED']);
    assert.equal(stream.query.resourceVersion, '20');
    assert.deepEqual(
      t.errors.map((e) => [e.info.phase, e.info.attempt]),
      [['list', 1]],
    );
    sub.unsubscribe();
  });

  it('a resumed LIST that fails again before a page starts over; what vanished meanwhile is deleted', async () => {
    const t = start({ firstListFromCache: false });
    let calls = 0;
    t.transport.onList = (q) => {
      calls++;
      if (!q.continue) return calls === 1 ? list('20', [object('a', '1')], 'p2') : list('30', [object('b', '2')], 'q2');
      if (q.continue === 'p2') return KubeApiError.fromResponse({ method: 'GET', path: '/x' }, 500, 'boom');
      return list('30', [object('c', '3')]);
    };
    const sub = t.subscribe();
    await flush();
    t.clock.advance(800); // resumes at p2: fails again
    await flush();
    t.clock.advance(1600); // starts over
    await t.transport.watchNumber(0);
    assert.deepEqual(
      t.transport.lists.map((q) => q.continue),
      [undefined, 'p2', 'p2', undefined, 'q2'],
    );
    assert.deepEqual(t.taken(), ['ADDED a', 'ADDED b', 'ADDED c', 'DELETED a', 'SYNCED']);
    sub.unsubscribe();
  });
});

/** The bookmark that ends a stream's initial events. */
const initialEventsEnd = (resourceVersion: string) => ({
  kind: 'ConfigMap',
  metadata: { resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } },
});

describe('watch() with streamed syncs (WatchList)', () => {
  function streaming(options: WatchOptions = {}) {
    const t = start({ streamingList: true, ...options });
    t.transport.watchList = true;
    return t;
  }

  it('syncs from one stream: ADDED events, SYNCED at the end bookmark, then watch events on the same stream', async () => {
    const t = streaming();
    const sub = t.subscribe();
    const stream = await t.transport.watchNumber(0);
    assert.equal(stream.query.sendInitialEvents, true);
    assert.equal(stream.query.resourceVersionMatch, 'NotOlderThan');
    assert.equal(stream.query.allowWatchBookmarks, true);
    assert.equal(stream.query.resourceVersion, undefined, 'the most recent state');
    stream.push('ADDED', object('a', '3'));
    stream.push('ADDED', object('b', '4', { managedFields: [{}] }));
    await flush();
    assert.deepEqual(t.taken(), ['ADDED a', 'ADDED b']);
    assert.equal(t.stats.lastSyncAt, undefined, 'not synced before the end bookmark');
    assert.equal(t.stats.resourceVersion, undefined, 'no resume point before the end bookmark');
    stream.push('BOOKMARK', initialEventsEnd('10'));
    stream.push('MODIFIED', object('a', '11'));
    await flush();
    assert.deepEqual(t.taken(), ['SYNCED', 'MODIFIED a']);
    assert.deepEqual([t.stats.lastSyncBy, t.stats.resourceVersion, t.stats.events], ['stream', '11', 1]);
    assert.equal(t.transport.lists.length, 0, 'no LIST');
    stream.end();
    const next = await t.transport.watchNumber(1);
    assert.equal(next.query.resourceVersion, '11');
    assert.equal(next.query.sendInitialEvents, undefined, 'an ordinary watch resumes');
    assert.equal(t.stats.restarts, 1);
    sub.unsubscribe();
  });

  it('resyncs by stream after 410 Gone and emits only what changed: MODIFIED, ADDED, DELETED at the end bookmark', async () => {
    const t = streaming();
    const sub = t.subscribe();
    const first = await t.transport.watchNumber(0);
    for (const [name, rv] of [
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
    ] as const)
      first.push('ADDED', object(name, rv));
    first.push('BOOKMARK', initialEventsEnd('5'));
    await flush();
    const lastC = (t.events[2] as { object: KubeObject }).object;
    t.taken();
    first.push('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    await flush();
    t.clock.advance(800);
    const second = await t.transport.watchNumber(1);
    assert.equal(second.query.sendInitialEvents, true);
    assert.equal(second.query.resourceVersion, undefined);
    second.push('ADDED', object('a', '1'));
    second.push('ADDED', object('b', '20'));
    second.push('ADDED', object('d', '25'));
    await flush();
    assert.deepEqual(t.taken(), ['MODIFIED b', 'ADDED d'], 'deletions wait for the end bookmark');
    second.push('BOOKMARK', initialEventsEnd('30'));
    await flush();
    const events = t.events.splice(0);
    assert.deepEqual(
      events.map((e) => (e.type === 'SYNCED' ? e.type : `${e.type} ${e.object.metadata?.name}`)),
      ['DELETED c', 'SYNCED'],
    );
    assert.equal((events[0] as { object: KubeObject }).object, lastC, 'the last known object, not a copy');
    assert.deepEqual([t.stats.relists, t.stats.resourceVersion], [1, '30']);
    assert.equal(t.errors.length, 0);
    sub.unsubscribe();
  });

  it('falls back to a paginated LIST when the server refuses to stream (422), and remembers it across relists', async () => {
    const t = start({ streamingList: true }); // the fake refuses it, as an API server with WatchList off
    t.transport.onList = () => list('5', [object('a', '1')]);
    const sub = t.subscribe();
    const watch = await t.transport.watchNumber(0);
    assert.deepEqual(t.taken(), ['ADDED a', 'SYNCED']);
    assert.equal(watch.query.resourceVersion, '5');
    assert.deepEqual([t.stats.lastSyncBy, t.stats.streamingUnsupported, t.stats.restarts], ['list', true, 0]);
    watch.fail(new KubeApiError(410, 'Expired', 'too old', 'GET', '/api/v1/configmaps'));
    await flush();
    t.clock.advance(800);
    await t.transport.watchNumber(1);
    assert.equal(t.transport.refusedStreams, 1, 'not asked again');
    assert.equal(t.transport.lists.length, 2);
    assert.equal(t.errors.length, 0, 'a refusal is not a failure');
    sub.unsubscribe();
  });

  it('falls back for good when the server ignores sendInitialEvents (a bookmark without the annotation)', async () => {
    const t = streaming();
    t.transport.onList = () => list('9', [object('a', '1'), object('b', '2')]);
    const sub = t.subscribe();
    const old = await t.transport.watchNumber(0);
    old.push('ADDED', object('a', '1'));
    old.push('BOOKMARK', { kind: 'ConfigMap', metadata: { resourceVersion: '8' } });
    const watch = await t.transport.watchNumber(1);
    assert.equal(old.closed, true);
    assert.deepEqual(t.taken(), ['ADDED a', 'ADDED b', 'SYNCED'], 'the LIST repeats nothing already emitted');
    assert.equal(watch.query.resourceVersion, '9');
    assert.equal(watch.query.sendInitialEvents, undefined);
    assert.equal(t.stats.streamingUnsupported, true);
    assert.equal(t.stats.restarts, 1);
    sub.unsubscribe();
  });

  it('lists once when a stream ends before its initial events did, and streams the next resync again', async () => {
    const t = streaming();
    t.transport.onList = () => list('9', [object('a', '1')]);
    const sub = t.subscribe();
    const cut = await t.transport.watchNumber(0);
    cut.push('ADDED', object('a', '1'));
    cut.end();
    const watch = await t.transport.watchNumber(1);
    assert.deepEqual(t.taken(), ['ADDED a', 'SYNCED']);
    assert.deepEqual(
      [watch.query.resourceVersion, t.stats.lastSyncBy, t.stats.streamingUnsupported],
      ['9', 'list', undefined],
    );
    watch.push('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' });
    await flush();
    t.clock.advance(800);
    const resync = await t.transport.watchNumber(2);
    assert.equal(resync.query.sendInitialEvents, true);
    assert.equal(t.transport.lists.length, 1);
    sub.unsubscribe();
  });

  describe('an object the protobuf decoder refused (nested past MAX_OBJECT_DEPTH)', () => {
    const tooDeep = (name: string, resourceVersion: string) =>
      new ObjectTooDeepError({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'ns', resourceVersion },
      });
    const logged = () => {
      const errors: string[] = [];
      const logger = { debug() {}, info() {}, warn() {}, error: (message: string) => errors.push(message) };
      return { errors, logger };
    };

    it('is logged naming it and skipped: the watch goes on past it, and delivers the next events', async () => {
      const log = logged();
      const t = start({ logger: log.logger });
      t.transport.onList = () => list('5', [object('a', '1')]);
      const sub = t.subscribe();
      const stream = await t.transport.watchNumber(0);
      t.taken();
      stream.pushRefused('ADDED', tooDeep('deep', '6'));
      stream.pushRefused('MODIFIED', tooDeep('a', '7'));
      stream.push('ADDED', object('b', '8'));
      await flush();
      assert.deepEqual(t.taken(), ['ADDED b'], 'the refused ones are not emitted; the cache keeps a as it was');
      assert.equal(t.transport.streams.length, 1, 'the same watch');
      assert.equal(t.stats.refused, 2);
      assert.equal(t.stats.resourceVersion, '8');
      assert.equal(t.errors.length, 0, 'not a failure of the watch');
      assert.match(
        log.errors[0]!,
        /^watch of configmaps: ConfigMap ns\/deep \(resourceVersion 6\) nests objects and arrays more than 1000 deep/,
      );
      // Resumed after the refused events, never before them.
      stream.end();
      assert.equal((await t.transport.watchNumber(1)).query.resourceVersion, '8');
      sub.unsubscribe();
    });

    it('a refused deletion still deletes: DELETED with the last version known', async () => {
      const t = start();
      t.transport.onList = () => list('5', [object('a', '1')]);
      const sub = t.subscribe();
      const stream = await t.transport.watchNumber(0);
      const known = (t.events[0] as { object: KubeObject }).object;
      t.taken();
      stream.pushRefused('DELETED', tooDeep('a', '9'));
      stream.pushRefused('DELETED', tooDeep('never-seen', '10'));
      await flush();
      const events = t.events.splice(0);
      assert.deepEqual(
        events.map((e) => (e.type === 'SYNCED' ? e.type : `${e.type} ${e.object.metadata?.name}`)),
        ['DELETED a'],
      );
      assert.equal((events[0] as { object: KubeObject }).object, known, 'the object last emitted');
      assert.equal(t.stats.resourceVersion, '10');
      sub.unsubscribe();
    });

    it('a streamed sync skips it and syncs: the stream goes on as the watch', async () => {
      const t = streaming();
      const sub = t.subscribe();
      const stream = await t.transport.watchNumber(0);
      stream.push('ADDED', object('a', '3'));
      stream.pushRefused('ADDED', tooDeep('deep', '4'));
      stream.push('BOOKMARK', initialEventsEnd('10'));
      stream.push('ADDED', object('b', '11'));
      await flush();
      assert.deepEqual(t.taken(), ['ADDED a', 'SYNCED', 'ADDED b']);
      assert.deepEqual([t.stats.refused, t.stats.restarts, t.transport.streams.length], [1, 0, 1]);
      sub.unsubscribe();
    });

    it('a relist keeps a refused object as it was known, not as deleted', async () => {
      const t = start();
      t.transport.onList = () => list('5', [object('a', '1'), object('b', '2')]);
      const sub = t.subscribe();
      const stream = await t.transport.watchNumber(0);
      t.taken();
      t.transport.onList = () => ({ ...list('30', [object('b', '2')]), refused: [tooDeep('a', '20')] });
      stream.push('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
      await flush();
      t.clock.advance(800);
      await t.transport.watchNumber(1);
      assert.deepEqual(t.taken(), ['SYNCED'], 'no DELETED a');
      assert.equal(t.stats.refused, 1);
      sub.unsubscribe();
    });
  });
});
