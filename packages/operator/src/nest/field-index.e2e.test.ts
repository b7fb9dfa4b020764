// A field index and an async mapper, as a newcomer's operator needs them (issue 42, item 4),
// against the real API server: "apps" (ConfigMaps labelled role=app) name the Secret they
// take settings from in data.secret; the controller declares an index of that name, and a
// @Watches(Secret) mapper finds the apps that name a changed Secret with
// `kube.list(ConfigMap, { index })` from the cache, awaited, instead of a hand-kept map.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { TestEnvironment, waitFor } from '@nestor/testing';
import {
  ConfigMap,
  Controller,
  KubeClient,
  OperatorMetrics,
  Reconcile,
  Secret,
  Watches,
  type ObjectRef,
} from '../index.js';
import { ServiceAccount, type V1ConfigMap, type V1Secret } from '../client/kinds.js';
import { configMapsPath, createConfigMap } from '../test-support/e2e-helpers.js';
import { bootOperatorApp } from '../test-support/operator-app.js';

/** What each reconcile of an app saw: the version of the Secret it names. */
const reconciled: Array<{ app: string; secretVersion: string | undefined }> = [];
/** The apps each mapping found for a Secret. */
const mapped: Array<{ secret: string; apps: string[] }> = [];

@Controller(ConfigMap, {
  labelSelector: 'role=app',
  indexes: { secret: (app: V1ConfigMap) => app.data?.['secret'] },
})
class Apps {
  constructor(private readonly kube: KubeClient) {}

  @Reconcile()
  async reconcile(app: V1ConfigMap): Promise<void> {
    const ns = app.metadata!.namespace!;
    const secret = await this.kube.get(Secret, { namespace: ns, name: app.data!['secret']! });
    reconciled.push({ app: app.metadata!.name!, secretVersion: secret?.metadata?.annotations?.['version'] });
  }

  @Watches(Secret)
  async secretChanged(secret: V1Secret): Promise<ObjectRef[]> {
    const { namespace, name } = secret.metadata!;
    const apps = await this.kube.list(ConfigMap, { namespace, index: { secret: name! } });
    mapped.push({ secret: name!, apps: apps.map((app) => app.metadata!.name!).sort() });
    return apps.map((app) => ({ namespace: app.metadata!.namespace!, name: app.metadata!.name! }));
  }
}

let env: TestEnvironment;
let app: INestApplicationContext;
let namespace: string;

async function putSecret(name: string, version: string): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/secrets`;
  const body = { apiVersion: 'v1', kind: 'Secret', metadata: { name, annotations: { version } } };
  await env.client.request('PUT', `${path}/${name}`, body).catch(() => env.client.request('POST', path, body));
}

before(async () => {
  env = await TestEnvironment.start();
  namespace = await env.createNamespace('field-index');
  await putSecret('db', '1');
  await putSecret('cache', '1');
  await createConfigMap(env.client, namespace, 'orders', { labels: { role: 'app' }, data: { secret: 'db' } });
  await createConfigMap(env.client, namespace, 'billing', { labels: { role: 'app' }, data: { secret: 'db' } });
  await createConfigMap(env.client, namespace, 'search', { labels: { role: 'app' }, data: { secret: 'cache' } });
  app = await bootOperatorApp({ kubeConfig: env.kubeConfig, namespace, providers: [Apps] });
});

after(async () => {
  await app?.close();
  await env?.stop();
});

describe('a field index read by an async mapper', () => {
  it('reconciles exactly the apps that name a changed Secret, found through the index', async () => {
    await waitFor(() => new Set(reconciled.map((r) => r.app)).size === 3, { what: 'every app reconciled once' });
    reconciled.length = 0;
    mapped.length = 0;

    await putSecret('db', '2');
    await waitFor(
      () => ['orders', 'billing'].every((name) => reconciled.some((r) => r.app === name && r.secretVersion === '2')),
      { what: 'both apps that name Secret db reconciled with its version 2, through the async mapper' },
    );
    assert.deepEqual(
      mapped.filter((m) => m.secret === 'db').at(-1)?.apps,
      ['billing', 'orders'],
      'the index files both apps under db',
    );
    assert.ok(!reconciled.some((r) => r.app === 'search'), 'the app naming another Secret is not reconciled');

    // An app moved to another Secret is filed anew: the index follows updates.
    await env.client.request(
      'PATCH',
      configMapsPath(namespace, 'billing'),
      { data: { secret: 'cache' } },
      'application/merge-patch+json',
    );
    await waitFor(
      async () => {
        mapped.length = 0;
        await putSecret('cache', String(Date.now()));
        await waitFor(() => mapped.some((m) => m.secret === 'cache'), { what: 'Secret cache mapped' });
        return mapped.find((m) => m.secret === 'cache')?.apps.join() === 'billing,search';
      },
      { what: 'billing filed under Secret cache once its data names it' },
    );
  });

  it('counts each read by what served it: the index and the watched Secrets from the cache, an unwatched kind from the server', async () => {
    const kube = app.get(KubeClient);
    await kube.list(ServiceAccount, { namespace }); // no controller watches ServiceAccounts
    const text = await app.get(OperatorMetrics).registry.metrics();
    const count = (labels: string) =>
      Number(new RegExp(`nestor_client_reads_total\\{${labels}\\} (\\d+)`).exec(text)?.[1] ?? 0);
    assert.ok(count('resource="configmaps",verb="list",source="cache"') > 0, 'the index lists, from the cache');
    assert.ok(count('resource="secrets",verb="get",source="cache"') > 0, "the reconciles' Secret gets, from the cache");
    assert.equal(count('resource="serviceaccounts",verb="list",source="server"'), 1, 'an unwatched kind: a LIST');
    assert.equal(count('resource="serviceaccounts",verb="list",source="cache"'), 0);
  });

  it('refuses a list by an index the kind does not have, naming what it has', async () => {
    const kube = app.get(KubeClient);
    await assert.rejects(
      kube.list(ConfigMap, { namespace, index: { owner: 'x' } }),
      /no field index named "owner" \(it has "secret"\)/,
    );
    await assert.rejects(
      kube.list(ConfigMap, { namespace, index: { secret: 'db' }, labelSelector: 'role=app' }),
      /cannot also take a label or field selector/,
    );
  });
});
