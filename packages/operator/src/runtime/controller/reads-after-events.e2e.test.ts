// Issue 44: two informers of one kind (every namespace's, for one controller; one
// namespace's, for another controller or a `watches` entry) are two watches, each at its
// own resourceVersion. A reconcile queued by an event of one must not read, through the
// other, an object older than that event.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { type KubeObject, Transport } from '@nestor/core';
import { ConfigMap, Secret } from '../../client/kinds.js';
import { createConfigMap, LaggingTransport, patchConfigMap } from '../../test-support/e2e-helpers.js';
import { InformerCache } from '../cache/informer-cache.js';
import { Manager } from '../manager/manager.js';

type Cm = KubeObject & { data?: Record<string, string> };

/** Every namespace's ConfigMaps come this late: the informer of all namespaces runs behind. */
const LAG_MS = 1500;

describe('reads consistent with the event that queued the reconcile', () => {
  let env: TestEnvironment;
  let transport: Transport;
  before(async () => {
    env = await TestEnvironment.start({ useExistingCluster: false });
    transport = await Transport.fromKubeConfig(env.kubeConfig);
  });
  after(async () => {
    transport?.close();
    await env?.stop();
  });

  /** A manager whose informer of every namespace's ConfigMaps lags; a controller of those keeps it running. */
  function laggingManager(): Manager {
    const informers = new InformerCache(new LaggingTransport(transport, '/api/v1/configmaps', LAG_MS));
    const manager = new Manager({ transport, informers, concurrency: 4 });
    manager.addController<Cm>({ name: 'every-namespace', resource: ConfigMap as never, reconcile: () => {} });
    return manager;
  }

  it('a watch restricted to a namespace: the reconcile reads the version its event brought, not an older one', async () => {
    const ns = await env.createNamespace('watches');
    await env.client.request('POST', `/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 'app' } });
    await createConfigMap(env.client, ns, 'settings', { data: { v: '0' } });
    /** The version the namespace's informer last handed the mapper. */
    let mapped: string | undefined;
    const runs: Array<{ queuedBy: string | undefined; read: string | undefined }> = [];
    const manager = laggingManager();
    manager.addController<KubeObject>({
      name: 'app',
      resource: Secret as never,
      namespace: ns,
      watches: [
        {
          resource: ConfigMap,
          namespace: ns,
          map: (object) => {
            mapped = (object as Cm).data?.['v'];
            return { namespace: ns, name: 'app' };
          },
        },
      ],
      reconcile: async ({ client }) => {
        const queuedBy = mapped;
        const settings = await client.get<Cm>(ConfigMap as never, { namespace: ns, name: 'settings' });
        runs.push({ queuedBy, read: settings?.data?.['v'] });
      },
    });
    await manager.start();
    try {
      for (const v of ['1', '2', '3']) {
        await patchConfigMap(env.client, ns, 'settings', { data: { v } });
        await waitFor(() => runs.some((run) => run.queuedBy === v), {
          timeoutMs: 30_000,
          what: `a reconcile queued by version ${v}`,
        });
        const stale = runs.filter((run) => run.queuedBy === v && run.read !== v);
        assert.deepEqual(stale, [], `reconciles queued by version ${v} read an older one`);
      }
    } finally {
      await manager.stop();
    }
  });

  it('a controller of one namespace: the client reads the object as its reconcile got it', async () => {
    const ns = await env.createNamespace('primary');
    await createConfigMap(env.client, ns, 'settings', { data: { v: '0' } });
    const runs: Array<{ got: string | undefined; read: string | undefined }> = [];
    const manager = laggingManager();
    manager.addController<Cm>({
      name: 'one-namespace',
      resource: ConfigMap as never,
      namespace: ns,
      reconcile: async ({ object, ref, client }) => {
        const read = await client.get<Cm>(ConfigMap as never, ref);
        runs.push({ got: object?.data?.['v'], read: read?.data?.['v'] });
      },
    });
    await manager.start();
    try {
      for (const v of ['1', '2', '3']) {
        await patchConfigMap(env.client, ns, 'settings', { data: { v } });
        await waitFor(() => runs.some((run) => run.got === v), {
          timeoutMs: 30_000,
          what: `a reconcile of version ${v}`,
        });
        assert.deepEqual(
          runs.filter((run) => run.read !== run.got),
          [],
          'the client read an older version than the reconcile was given',
        );
      }
    } finally {
      await manager.stop();
    }
  });
});
