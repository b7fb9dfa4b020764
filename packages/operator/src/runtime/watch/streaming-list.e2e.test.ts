// Streamed syncs (WatchList, KEP-3157) against a real API server, and the fallback to
// paginated LISTs where the server has the feature off.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listPages, type KubeObject, Transport } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import {
  configMapsPath,
  createConfigMap,
  GatedTransport,
  parallel,
  patchConfigMap,
} from '../../test-support/e2e-helpers.js';
import { Informer } from '../cache/informer.js';

const streamed = { streamingList: true, backoff: { initialMs: 100, maxMs: 1000 } };

/** `name@resourceVersion` of every object a LIST returns now. */
async function listed(transport: Transport, namespace: string): Promise<string[]> {
  const entries: string[] = [];
  for await (const page of listPages<KubeObject>(transport, configMapsPath(namespace))) {
    for (const item of page.items) entries.push(`${item.metadata?.name}@${item.metadata?.resourceVersion}`);
  }
  return entries.sort();
}

function cached(informer: Informer): string[] {
  return informer
    .list()
    .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
    .sort();
}

/** Cuts the informer's watch off, changes things, compacts etcd so its resourceVersion is gone (410), reconnects. */
async function missChangesAndExpire(env: TestEnvironment, gated: GatedTransport, ns: string): Promise<void> {
  gated.close();
  await env.restartApiServer({ kill: true });
  await env.client.request('DELETE', configMapsPath(ns, 'cm-1'));
  await env.client.request('DELETE', configMapsPath(ns, 'cm-2'));
  await patchConfigMap(env.client, ns, 'cm-3', { data: { key: 'new' } });
  await createConfigMap(env.client, ns, 'meanwhile');
  await env.compactEtcd();
  // A fresh watch cache, so the old resourceVersion is not served from memory either.
  await env.restartApiServer({ kill: true });
  gated.open();
}

describe('streamed syncs against the shared API server', () => {
  let env: TestEnvironment;
  let transport: Transport;
  let informer: Informer | undefined;

  before(async () => {
    env = await TestEnvironment.start();
    transport = await Transport.fromKubeConfig(env.kubeConfig);
  });
  after(async () => {
    informer?.stop();
    transport?.close();
    await env?.stop();
  });

  it('syncs 1,200 objects from one stream, exactly those a LIST returns, and follows changes on it', async () => {
    const ns = await env.createNamespace('stream-sync');
    await parallel(
      Array.from({ length: 1200 }, (_, i) => `cm-${i}`),
      16,
      (name) => createConfigMap(env.client, ns, name),
    );
    informer = new Informer(transport, ConfigMap, { ...streamed, namespace: ns });
    informer.start();
    await informer.whenSynced();

    assert.equal(informer.stats.lastSyncBy, 'stream');
    assert.equal(transport.stats.requests, 0, 'no LIST');
    assert.equal(transport.stats.watches, 1);
    assert.deepEqual(cached(informer), await listed(transport, ns));
    assert.equal(informer.get(`${ns}/cm-0`)?.metadata?.managedFields, undefined, 'managedFields stripped');

    await createConfigMap(env.client, ns, 'fresh');
    await env.client.request('DELETE', configMapsPath(ns, 'cm-7'));
    await waitFor(() => informer!.get(`${ns}/fresh`) !== undefined && informer!.get(`${ns}/cm-7`) === undefined, {
      what: 'changes after the sync',
    });
    assert.equal(transport.stats.watches, 1, 'on the stream that synced');
  });
});

describe('streamed resync after etcd compaction', () => {
  let env: TestEnvironment;
  let transport: Transport;
  let informer: Informer | undefined;

  before(async () => {
    env = await TestEnvironment.start({ useExistingCluster: false });
    transport = await Transport.fromKubeConfig(env.kubeConfig);
  });
  after(async () => {
    informer?.stop();
    transport?.close();
    await env?.stop();
  });

  it('notices what was deleted while it was cut off: 410 Gone, a new stream, deletions at its end', async () => {
    const ns = await env.createNamespace('stream-resync');
    await parallel(['cm-1', 'cm-2', 'cm-3', 'cm-4'], 4, (name) => createConfigMap(env.client, ns, name));
    const gated = new GatedTransport(transport);
    informer = new Informer(gated, ConfigMap, { ...streamed, namespace: ns });
    const deleted: string[] = [];
    informer.events$.subscribe((e) => e.type === 'deleted' && deleted.push(e.object.metadata!.name!));
    informer.start();
    await informer.whenSynced();
    assert.equal(informer.stats.lastSyncBy, 'stream');

    await missChangesAndExpire(env, gated, ns);
    await waitFor(() => informer!.stats.relists === 1, { timeoutMs: 60_000, what: 'the resync after 410' });
    assert.equal(informer.stats.lastSyncBy, 'stream');
    assert.equal(transport.stats.requests, 0, 'no LIST');
    assert.equal(gated.streamQueries.filter((q) => q.sendInitialEvents).length, 2, 'the first sync and the resync');
    assert.deepEqual(deleted.sort(), ['cm-1', 'cm-2']);
    assert.deepEqual(cached(informer), await listed(transport, ns));
  });
});

describe('an API server with the WatchList feature off', () => {
  let env: TestEnvironment;
  let transport: Transport;
  let informer: Informer | undefined;

  before(async () => {
    env = await TestEnvironment.start({
      useExistingCluster: false,
      apiServerFlags: ['--feature-gates=WatchList=false'],
    });
    transport = await Transport.fromKubeConfig(env.kubeConfig);
  });
  after(async () => {
    informer?.stop();
    transport?.close();
    await env?.stop();
  });

  it('is listed in pages instead, and not asked to stream again at the resync after 410 Gone', async () => {
    const ns = await env.createNamespace('no-watchlist');
    await parallel(
      Array.from({ length: 1200 }, (_, i) => `cm-${i}`),
      16,
      (name) => createConfigMap(env.client, ns, name),
    );
    const gated = new GatedTransport(transport);
    informer = new Informer(gated, ConfigMap, { ...streamed, namespace: ns });
    informer.start();
    await informer.whenSynced();
    assert.equal(informer.stats.streamingUnsupported, true);
    assert.equal(informer.stats.lastSyncBy, 'list');
    assert.equal(transport.stats.requests, 1, 'one LIST, from the watch cache (resourceVersion 0)');
    assert.equal(informer.stats.failures, 0, 'the refusal is no failure');
    assert.deepEqual(cached(informer), await listed(transport, ns));
    const requests = transport.stats.requests;

    const deleted: string[] = [];
    informer.events$.subscribe((e) => e.type === 'deleted' && deleted.push(e.object.metadata!.name!));
    await missChangesAndExpire(env, gated, ns);
    await waitFor(() => informer!.stats.relists === 1, { timeoutMs: 60_000, what: 'the relist after 410' });
    assert.deepEqual(deleted.sort(), ['cm-1', 'cm-2']);
    assert.deepEqual(cached(informer), await listed(transport, ns));
    assert.equal(informer.stats.lastSyncBy, 'list');
    assert.equal(transport.stats.requests - requests, 3 + 3, 'the relist in pages, and the test’s own LIST');
    assert.equal(gated.streamQueries.filter((q) => q.sendInitialEvents).length, 1, 'asked to stream once only');
  });
});
