// What the decorators narrow the cache to, against the real API server: a list of
// namespaces (one informer each; nothing from other namespaces is cached or reconciled),
// metadata-only caches for an owned kind and a watched kind (no data on the wire or in
// memory, the owner and the mapper still fed), and a field selector on @Watches.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { TestEnvironment, waitFor } from '@nestor/testing';
import {
  ConfigMap,
  Controller,
  InformerCache,
  Reconcile,
  Secret,
  Watches,
  type KubeObject,
  type ObjectRef,
} from '../index.js';
import { createConfigMap } from '../test-support/e2e-helpers.js';
import { bootOperatorApp } from '../test-support/operator-app.js';

const suffix = randomBytes(4).toString('hex');
const teamA = `scopes-a-${suffix}`;
const teamB = `scopes-b-${suffix}`;
const outside = `scopes-c-${suffix}`;

/** Keys reconciled, with whether the reconciler got the object. */
const reconciled: Array<{ key: string; hadObject: boolean }> = [];
/** What the metadata-only @Watches mapper was given. */
const mapped: KubeObject[] = [];

@Controller(ConfigMap, { namespaces: [teamA, teamB], owns: [{ resource: Secret, metadataOnly: true }] })
class TeamConfig {
  @Reconcile()
  reconcile(object: KubeObject | undefined, context: { key: string }): void {
    reconciled.push({ key: context.key, hadObject: object?.metadata?.name !== undefined });
  }

  @Watches(Secret, { namespace: teamA, fieldSelector: 'metadata.name=settings', metadataOnly: true })
  settingsChanged(secret: KubeObject): ObjectRef {
    mapped.push(secret);
    return { namespace: teamA, name: 'main' };
  }
}

let env: TestEnvironment;
let app: INestApplicationContext;

const countOf = (key: string) => reconciled.filter((r) => r.key === key).length;

async function createSecret(namespace: string, name: string, extra: Record<string, unknown> = {}): Promise<KubeObject> {
  return env.client.request<KubeObject>('POST', `/api/v1/namespaces/${namespace}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, ...extra },
    stringData: { password: 'hunter2' },
  });
}

before(async () => {
  env = await TestEnvironment.start();
  for (const name of [teamA, teamB, outside]) {
    await env.client.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  for (const namespace of [teamA, teamB, outside]) await createConfigMap(env.client, namespace, 'main');
  app = await bootOperatorApp({ kubeConfig: env.kubeConfig, providers: [TeamConfig] });
});

after(async () => {
  await app?.close();
  for (const name of [teamA, teamB, outside]) await env?.client.request('DELETE', `/api/v1/namespaces/${name}`);
  await env.stop();
});

describe('cache scopes', () => {
  it('a list of namespaces: objects in each are reconciled with their object; others are not cached', async () => {
    await waitFor(() => countOf(`${teamA}/main`) > 0 && countOf(`${teamB}/main`) > 0, {
      timeoutMs: 20_000,
      what: 'main reconciled in both namespaces',
    });
    await createConfigMap(env.client, teamB, 'late');
    await createConfigMap(env.client, outside, 'late');
    await waitFor(() => countOf(`${teamB}/late`) > 0, {
      timeoutMs: 20_000,
      what: 'a new object in the second namespace',
    });
    assert.ok(
      reconciled.every((r) => r.hadObject),
      'each key read from its namespace’s informer',
    );
    assert.equal(reconciled.filter((r) => r.key.startsWith(`${outside}/`)).length, 0);
    const cache = app.get(InformerCache);
    const held = cache
      .all()
      .filter((informer) => informer.resource.kind === 'ConfigMap')
      .flatMap((informer) => informer.list().map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`))
      .sort();
    assert.deepEqual(held, [`${teamA}/main`, `${teamB}/late`, `${teamB}/main`]);
  });

  it('an owned kind cached as metadata only: its changes reconcile the owner, its data is never held', async () => {
    const owner = await env.client.request<KubeObject>('GET', `/api/v1/namespaces/${teamB}/configmaps/main`);
    const before = countOf(`${teamB}/main`);
    await createSecret(teamB, 'owned', {
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'main', uid: owner.metadata!.uid, controller: true },
      ],
    });
    await waitFor(() => countOf(`${teamB}/main`) > before, { timeoutMs: 20_000, what: 'the owner reconciled' });
    const handle = app.get(InformerCache).acquire(Secret, { namespace: teamB, metadataOnly: true });
    try {
      const cached = handle.informer.get(`${teamB}/owned`) as (KubeObject & { data?: unknown }) | undefined;
      assert.ok(cached, 'the owned Secret is cached');
      assert.equal(cached.kind, 'Secret');
      assert.equal(cached.apiVersion, 'v1');
      assert.equal(cached.metadata?.ownerReferences?.[0]?.name, 'main');
      assert.equal(cached.data, undefined, 'no data on the wire or in memory');
    } finally {
      handle.release();
    }
  });

  it('a watched kind as metadata only, through a field selector: only the matching object is mapped', async () => {
    const before = countOf(`${teamA}/main`);
    await createSecret(teamA, 'unrelated');
    await createSecret(teamA, 'settings', { labels: { tier: 'gold' } });
    await waitFor(() => mapped.length > 0 && countOf(`${teamA}/main`) > before, {
      timeoutMs: 20_000,
      what: 'the settings Secret mapped to main',
    });
    assert.deepEqual([...new Set(mapped.map((s) => s.metadata?.name))], ['settings']);
    const secret = mapped[0] as KubeObject & { data?: unknown; stringData?: unknown };
    assert.equal(secret.kind, 'Secret');
    assert.equal(secret.metadata?.labels?.tier, 'gold', 'metadata is all there');
    assert.equal(secret.data, undefined);
  });
});
