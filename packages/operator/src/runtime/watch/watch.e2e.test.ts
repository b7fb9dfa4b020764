import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Subscription } from 'rxjs';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import { type KubeObject, Transport } from '@nestor/core';
import {
  configMapsPath,
  createConfigMap,
  GatedTransport,
  parallel,
  patchConfigMap,
} from '../../test-support/e2e-helpers.js';
import { watch } from './watch.js';
import type { WatchEvent } from './watch-event.js';
import type { WatchOptions, WatchTransport } from './watch-options.js';
import { createWatchStats } from './watch-stats.js';

/** Subscribes and records events by name: `ADDED a`, `SYNCED`. */
function record(transport: WatchTransport, options: WatchOptions) {
  const stats = createWatchStats();
  const log: string[] = [];
  const events: WatchEvent<KubeObject>[] = [];
  const subscription = watch(transport, ConfigMap, { ...options, stats }).subscribe((event) => {
    events.push(event);
    log.push(event.type === 'SYNCED' ? 'SYNCED' : `${event.type} ${event.object.metadata?.name}`);
  });
  return { stats, log, events, subscription, has: (entry: string) => log.includes(entry) };
}

const fast: WatchOptions = { backoff: { initialMs: 100, maxMs: 1000 } };

describe('watch() against the shared API server', () => {
  let env: TestEnvironment;
  const subscriptions: Subscription[] = [];
  const transports: Transport[] = [];
  const newTransport = async () => {
    const transport = await Transport.fromKubeConfig(env.kubeConfig);
    transports.push(transport);
    return transport;
  };

  before(async () => {
    env = await TestEnvironment.start();
  });
  after(async () => {
    for (const subscription of subscriptions) subscription.unsubscribe();
    for (const transport of transports) transport.close();
    await env?.stop();
  });

  it('lists 1,200 objects in pages of 500, then follows create, update and delete', async () => {
    const ns = await env.createNamespace('watch-list');
    const names = Array.from({ length: 1200 }, (_, i) => `cm-${i}`);
    await parallel(names, 16, (name) => createConfigMap(env.client, ns, name));
    const transport = await newTransport();
    // A consistent read, as relists are: from the watch cache the server answers in one page.
    const w = record(transport, { ...fast, namespace: ns, firstListFromCache: false });
    subscriptions.push(w.subscription);

    await waitFor(() => w.has('SYNCED'), { what: 'the initial list' });
    const added = w.events.filter((e) => e.type === 'ADDED');
    assert.equal(added.length, 1200);
    assert.equal(new Set(added.map((e) => e.type !== 'SYNCED' && e.object.metadata?.name)).size, 1200);
    assert.equal(transport.stats.requests, 3, 'three LIST pages');
    const first = added[0] as { object: KubeObject };
    assert.equal(first.object.kind, 'ConfigMap');
    assert.equal(first.object.metadata?.managedFields, undefined, 'managedFields stripped');

    await createConfigMap(env.client, ns, 'fresh');
    await patchConfigMap(env.client, ns, 'fresh', { data: { key: 'changed' } });
    await env.client.request('DELETE', configMapsPath(ns, 'cm-7'));
    await waitFor(() => w.has('ADDED fresh') && w.has('MODIFIED fresh') && w.has('DELETED cm-7'), {
      what: 'watch events',
    });
    const modified = w.events.find((e) => e.type === 'MODIFIED') as { object: { data?: Record<string, string> } };
    assert.equal(modified.object.data?.key, 'changed');
    assert.equal(transport.stats.watches, 1);
  });

  it('takes its first list from the watch cache in one JSON page, decoded item by item, exactly as written', async () => {
    const ns = await env.createNamespace('watch-json-page');
    const names = Array.from({ length: 1200 }, (_, i) => `cm-${i}`);
    // Strings that look like structure: quotes, braces, backslashes, the key "items", non-ASCII.
    const dataOf = (i: number) => ({ v: String(i), tricky: `"items":[{"x":"}]\\"${'\\'.repeat(i % 4)}ü🙂` });
    await parallel(names, 16, (name, i) => createConfigMap(env.client, ns, name, { data: dataOf(i) }));
    // JSON, as for a custom resource.
    const transport = await Transport.fromKubeConfig(env.kubeConfig, { protobuf: false });
    transports.push(transport);
    const w = record(transport, { ...fast, namespace: ns });
    subscriptions.push(w.subscription);

    await waitFor(() => w.has('SYNCED'), { what: 'the initial list' });
    assert.equal(transport.stats.requests, 1, 'one LIST page, from the watch cache');
    const byName = new Map(
      w.events.flatMap((e) =>
        e.type === 'ADDED' ? [[e.object.metadata!.name!, e.object as KubeObject & { data?: object }]] : [],
      ),
    );
    assert.equal(byName.size, 1200);
    for (const [i, name] of names.entries()) assert.deepEqual(byName.get(name)?.data, dataOf(i), name);
    assert.equal(byName.get('cm-0')?.kind, 'ConfigMap');
  });

  it('advances its resourceVersion with bookmarks and resumes from it', async () => {
    const ns = await env.createNamespace('watch-bookmark');
    const transport = await newTransport();
    // A short server timeout: the API server sends a bookmark shortly before it ends the watch.
    const w = record(transport, { ...fast, namespace: ns, minWatchTimeoutSeconds: 3 });
    subscriptions.push(w.subscription);
    await waitFor(() => w.has('SYNCED'), { what: 'the initial list' });
    const listed = Number(w.stats.resourceVersion);
    // Changes elsewhere move the cluster's resourceVersion; this watch sees no event for them.
    const elsewhere = await env.createNamespace('watch-bookmark-other');
    await createConfigMap(env.client, elsewhere, 'elsewhere');

    await waitFor(() => w.stats.bookmarks > 0 && transport.stats.watches >= 2, {
      timeoutMs: 30_000,
      what: 'a bookmark and the next watch',
    });
    assert.equal(w.stats.events, 0);
    assert.ok(Number(w.stats.resourceVersion) > listed, `bookmark moved ${listed} to ${w.stats.resourceVersion}`);
    assert.equal(w.stats.relists, 0);
    await createConfigMap(env.client, ns, 'after-bookmark');
    await waitFor(() => w.has('ADDED after-bookmark'), { what: 'an event after resuming' });
  });

  it('reconnects a stalled watch', async () => {
    const ns = await env.createNamespace('watch-stall');
    const transport = await newTransport();
    const w = record(transport, { ...fast, namespace: ns, stallTimeoutMs: 1000 });
    subscriptions.push(w.subscription);
    await waitFor(() => w.stats.restarts > 0, { what: 'a reconnect after the stall' });
    assert.match(w.stats.lastError ?? '', /no event for 1000 ms/);
    await createConfigMap(env.client, ns, 'after-stall');
    await waitFor(() => w.has('ADDED after-stall'), { what: 'an event after the stall' });
    assert.equal(w.stats.relists, 0);
  });
});

describe('watch() through API server restarts and etcd compaction', () => {
  let env: TestEnvironment;
  let transport: Transport;
  const subscriptions: Subscription[] = [];

  before(async () => {
    env = await TestEnvironment.start({ useExistingCluster: false });
    transport = await Transport.fromKubeConfig(env.kubeConfig);
  });
  after(async () => {
    for (const subscription of subscriptions) subscription.unsubscribe();
    transport?.close();
    await env?.stop();
  });

  it('reconnects after an API server restart and sees what changed meanwhile and after', async () => {
    const ns = await env.createNamespace('restart');
    await createConfigMap(env.client, ns, 'before');
    const gated = new GatedTransport(transport);
    const w = record(gated, { ...fast, namespace: ns });
    subscriptions.push(w.subscription);
    await waitFor(() => w.has('SYNCED'), { what: 'the initial list' });

    gated.close();
    await env.restartApiServer({ kill: true });
    // The watch is cut off and waits at the gate: these changes happen while it is away.
    await createConfigMap(env.client, ns, 'meanwhile');
    await env.client.request('DELETE', configMapsPath(ns, 'before'));
    gated.open();
    await waitFor(() => w.has('ADDED meanwhile') && w.has('DELETED before'), { what: 'the missed changes' });
    await createConfigMap(env.client, ns, 'after');
    await waitFor(() => w.has('ADDED after'), { what: 'a change after the restart' });
    assert.ok(w.stats.restarts >= 1);
  });

  it('relists from a compacted resourceVersion and emits only the differences', async () => {
    const ns = await env.createNamespace('compact');
    await parallel(['keep', 'change', 'remove'], 3, (name) => createConfigMap(env.client, ns, name));
    const gated = new GatedTransport(transport);
    const w = record(gated, { ...fast, namespace: ns });
    subscriptions.push(w.subscription);
    await waitFor(() => w.has('SYNCED'), { what: 'the initial list' });
    const removed = w.events.find((e) => e.type === 'ADDED' && e.object.metadata?.name === 'remove');

    gated.close();
    await env.restartApiServer({ kill: true });
    await env.client.request('DELETE', configMapsPath(ns, 'remove'));
    await patchConfigMap(env.client, ns, 'change', { data: { key: 'new' } });
    await createConfigMap(env.client, ns, 'new');
    await env.compactEtcd();
    // A fresh watch cache, so the old resourceVersion is not served from memory either.
    await env.restartApiServer({ kill: true });
    w.log.length = 0;
    w.events.length = 0;
    gated.open();

    await waitFor(() => w.has('SYNCED'), { what: 'the relist' });
    assert.deepEqual([...w.log].sort(), ['ADDED new', 'DELETED remove', 'MODIFIED change', 'SYNCED']);
    assert.equal(w.log.at(-1), 'SYNCED');
    const deleted = w.events.find((e) => e.type === 'DELETED') as { object: KubeObject };
    assert.equal(deleted.object, (removed as { object: KubeObject }).object, 'the last known object');
    assert.equal(w.stats.relists, 1);
  });
});
