// An informer of 10,000 ConfigMaps against a real API server whose answers an ApiProxy
// breaks: a LIST cut in the middle of a page and a later page answered 500, then watches
// ended by ERROR events other than 410 (what the API server sends when etcd fails under its
// watch, "too large resourceVersion" when it is behind the client, "too old" said without
// 410, and an ERROR a broken proxy sends with no Status). Nothing may be lost, duplicated or
// left open, and the retries back off. A private control plane: 10,000 objects would weigh
// on every other file's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeApiError, keyOf, type KubeObject, type ObjectRef, Transport } from '@nestor/core';
import { ApiProxy, parallel, TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import { Informer, type InformerEvent } from '../cache/informer.js';
import type { WatchErrorInfo } from './watch-options.js';

const N = 10_000;
const PAGE = 500;

let env: TestEnvironment;
let proxy: ApiProxy;
let transport: Transport;
let namespace: string;
const path = (name = '') => `/api/v1/namespaces/${namespace}/configmaps${name ? `/${name}` : ''}`;

before(async () => {
  env = await TestEnvironment.start({ useExistingCluster: false });
  namespace = await env.createNamespace('watch-faults');
  await parallel(
    Array.from({ length: N }, (_, i) => `cm-${i}`),
    64,
    (name) => env.client.request('POST', path(), { metadata: { name }, data: { v: '0' } }),
  );
  proxy = await ApiProxy.start(env.kubeConfig);
  transport = await Transport.fromKubeConfig(proxy.kubeConfig(env.kubeConfig));
});
after(async () => {
  transport?.close();
  await proxy?.close();
  await env?.stop();
});

/** The server's state, by key: resourceVersion. */
async function serverState(): Promise<Map<string, string>> {
  const list = await env.client.request<{ items: KubeObject[] }>('GET', path());
  return new Map(list.items.map((o) => [keyOf(o.metadata as ObjectRef), o.metadata!.resourceVersion!]));
}

function informerState(informer: Informer<KubeObject>): Map<string, string> {
  return new Map(informer.list().map((o) => [keyOf(o.metadata as ObjectRef), o.metadata!.resourceVersion!]));
}

const lists = () => proxy.requests.filter((r) => r.method === 'GET' && !r.watch && r.path === path()).length;
const watches = () => proxy.requests.filter((r) => r.watch && r.path === path());
/** Matches the n-th LIST request (1-based) counted from `from` LISTs. */
const nthList =
  (n: number, from: number) =>
  (r: { watch: boolean; path: string }): boolean =>
    !r.watch && r.path === path() && lists() - from === n;

function start(errors: Array<{ error: Error; info: WatchErrorInfo }>, events: InformerEvent<KubeObject>[]) {
  const informer = new Informer<KubeObject>(transport, ConfigMap as never, {
    namespace,
    // Consistent LISTs in pages (the first sync would be one page from the watch cache).
    firstListFromCache: false,
    pageSize: PAGE,
    // Short, so the faults below take seconds; the doubling is what is checked.
    backoff: { initialMs: 50, maxMs: 2_000 },
    onError: (error, info) => errors.push({ error, info }),
  });
  informer.events$.subscribe((event) => events.push(event));
  informer.start();
  return informer;
}

describe(`an informer of ${N} ConfigMaps through a proxy that breaks what it relays`, () => {
  it('a LIST cut in the middle of a page, and a later page answered 500: resumed at the page, nothing lost or twice', async () => {
    const listsBefore = lists();
    // Page 6 cut 20 kB into its body; then, after it is asked again, page 8 answered 500 by
    // "the API server" (requests 6 and 9: a page is asked for while the one before is read).
    const cut = proxy.inject({ match: nthList(6, listsBefore), fault: { cutAfterBytes: 20_000 } });
    const failed = proxy.inject({
      match: nthList(9, listsBefore),
      fault: {
        answer: {
          status: 500,
          body: {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            code: 500,
            reason: 'InternalError',
            message: 'etcdserver: request timed out',
          },
        },
      },
    });
    const errors: Array<{ error: Error; info: WatchErrorInfo }> = [];
    const events: InformerEvent<KubeObject>[] = [];
    const informer = start(errors, events);
    try {
      await informer.whenSynced(AbortSignal.timeout(60_000));
      assert.equal(cut.hits, 1);
      assert.equal(failed.hits, 1);
      assert.equal(informer.size, N);
      assert.deepEqual(informerState(informer), await serverState(), 'every object, at its resourceVersion');
      assert.equal(events.length, N, 'one event per object');
      assert.ok(events.every((e) => e.type === 'added'));
      assert.equal(new Set(events.map((e) => keyOf(e.object.metadata as ObjectRef))).size, N);
      // 20 pages and the two that failed asked again: no page before them asked twice.
      assert.equal(lists() - listsBefore, N / PAGE + 2);
      assert.deepEqual(
        errors.map((e) => [e.info.phase, e.info.attempt]),
        [
          ['list', 1],
          ['list', 2],
        ],
      );
      assert.ok(errors[1]!.info.retryInMs >= 2 * 50, 'the second retry waits longer');
      assert.ok(errors[1]!.error instanceof KubeApiError && errors[1]!.error.status === 500);
      await waitFor(() => proxy.openWatches === 1, { what: 'the watch after the sync' });
    } finally {
      informer.stop();
    }
    await waitFor(() => proxy.openWatches === 0, { what: 'the watch closed with the informer' });
  });

  it('watches ended by ERROR events other than 410: resumed or relisted as each calls for, nothing lost', async () => {
    const errors: Array<{ error: Error; info: WatchErrorInfo }> = [];
    const events: InformerEvent<KubeObject>[] = [];
    const informer = start(errors, events);
    const status = (code: number, reason: string, message: string, extra: object = {}) => ({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code,
      reason,
      message,
      ...extra,
    });
    const change = async (round: number) => {
      await parallel(
        Array.from({ length: 100 }, (_, i) => `cm-${round * 100 + i}`),
        16,
        (name) =>
          env.client.request('PATCH', path(name), { data: { v: String(round) } }, 'application/merge-patch+json'),
      );
      await parallel(
        Array.from({ length: 20 }, (_, i) => `cm-${9_000 + round * 20 + i}`),
        16,
        (name) => env.client.request('DELETE', path(name)),
      );
      await parallel(
        Array.from({ length: 20 }, (_, i) => `new-${round}-${i}`),
        16,
        (name) => env.client.request('POST', path(), { metadata: { name }, data: { v: String(round) } }),
      );
    };
    /** Waits until the informer holds the server's state; returns the LISTs and WATCHes it took. */
    const settled = async (what: string) => {
      const state = await serverState();
      await waitFor(
        () => {
          const mine = informerState(informer);
          return mine.size === state.size && [...state].every(([key, rv]) => mine.get(key) === rv);
        },
        { timeoutMs: 30_000, what },
      );
      await waitFor(() => proxy.openWatches === 1, { what: `${what}: the watch open again` });
    };
    try {
      await informer.whenSynced(AbortSignal.timeout(60_000));
      const synced = lists();

      // The etcd3 watcher's error when its etcd watch fails: resumed where it stopped.
      await change(1);
      await settled('round 1');
      const opened = watches().length;
      const at = Number(informer.stats.resourceVersion);
      assert.equal(proxy.breakWatches(status(500, 'InternalError', 'etcdserver: no leader')), 1);
      await change(2);
      await settled('round 2, after a 500 ERROR event');
      assert.equal(lists(), synced, 'resumed, not relisted');
      assert.ok(Number(watches()[opened]!.query.get('resourceVersion')) >= at, 'from where it stopped');

      // An ERROR a broken proxy sends, with no Status: resumed too.
      assert.equal(proxy.breakWatches('upstream reset before headers'), 1);
      // ...and the watch that resumes answered "Too large resource version" (an API server
      // behind the client, as after a failover to a lagging one): twice at one
      // resourceVersion, so the next sync is a consistent relist.
      proxy.inject({
        match: (r) => r.watch && r.path === path(),
        fault: {
          errorEvent: status(504, 'Timeout', 'Too large resource version: 999999999, current: 1234', {
            details: {
              causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
              retryAfterSeconds: 1,
            },
          }),
        },
      });
      await change(3);
      await settled('round 3, after an ERROR without a Status and a 504 ERROR event');
      assert.equal(lists() - synced, N / PAGE, 'one relist, in pages');
      assert.equal(informer.stats.relists, 1);

      // "Too old" said as a 500 (etcd's compaction error passed through): relisted at once.
      // Nothing changed meanwhile, so the relist emits nothing.
      const before = events.length;
      const relists = informer.stats.relists;
      assert.equal(
        proxy.breakWatches(status(500, 'InternalError', 'etcdserver: mvcc: required revision has been compacted')),
        1,
      );
      await waitFor(() => informer.stats.relists === relists + 1, { what: 'the relist after "compacted"' });
      assert.equal(events.length, before, 'an unchanged relist emits nothing');
      await change(4);
      await settled('round 4');

      // Each object changed once per round appears once per change: nothing twice.
      const modified = events.filter((e) => e.type === 'updated').length;
      const added = events.filter((e) => e.type === 'added').length;
      const deleted = events.filter((e) => e.type === 'deleted').length;
      assert.deepEqual([added - N, modified, deleted], [80, 400, 80]);
      assert.equal(informer.size, N);
      // The 504 said when to come back to that resourceVersion (retryAfterSeconds: 1), but it
      // was the second break at it: the relist is a consistent read, which that second does
      // not concern, and goes at once (a resume waits it: watch.test.ts). The backoff doubles
      // from 50 ms across the other faults that said nothing (it forgets after 30 quiet s).
      const asked = errors.filter((e) => /Too large resource version/.test(e.error.message));
      // Round 2's etcd hiccup, isolated on a served watch, resumed at once.
      const hiccup = errors.filter((e) => /no leader/.test(e.error.message));
      const unsaid = errors.filter((e) => !asked.includes(e) && !hiccup.includes(e));
      assert.ok(asked.length > 0, 'the 504 was an error of the watch');
      assert.deepEqual(new Set(asked.map((e) => e.info.retryInMs)), new Set([0]), 'the consistent relist at once');
      assert.deepEqual(
        hiccup.map((e) => e.info.retryInMs),
        [0],
        'an etcd hiccup on a served watch resumes at once',
      );
      assert.ok(
        unsaid.every((e, i) => e.info.retryInMs >= Math.min(50 * 2 ** i, 2_000)),
        `backoff: ${unsaid.map((e) => e.info.retryInMs).join(', ')} ms`,
      );
      assert.ok(watches().length - opened < 12, `few watches opened: ${watches().length - opened}`);

      // Two 500s at one resourceVersion, nothing between: relisted, as client-go's reflector
      // relists, at a state not older than that resourceVersion (the API server's watch
      // cache), not every object read again from etcd; nothing lost, nothing twice.
      const listsBefore = lists();
      const relistsBefore = informer.stats.relists;
      const eventsBefore = events.length;
      const noLeader = status(500, 'InternalError', 'etcdserver: no leader');
      proxy.inject({ match: (r) => r.watch && r.path === path(), fault: { errorEvent: noLeader } });
      assert.equal(proxy.breakWatches(noLeader), 1);
      await change(5);
      await settled('round 5, after two 500 ERROR events at one resourceVersion');
      assert.equal(informer.stats.relists, relistsBefore + 1);
      const relist = proxy.requests.filter((r) => r.method === 'GET' && !r.watch && r.path === path());
      assert.equal(relist[listsBefore]?.query.get('resourceVersionMatch'), 'NotOlderThan');
      const round5 = events.slice(eventsBefore);
      assert.deepEqual(
        ['added', 'updated', 'deleted'].map((type) => round5.filter((e) => e.type === type).length),
        [20, 100, 20],
      );
    } finally {
      informer.stop();
    }
    await waitFor(() => proxy.openWatches === 0, { what: 'the watch closed with the informer' });
  });
});
