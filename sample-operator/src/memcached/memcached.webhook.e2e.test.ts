// The Memcached admission webhook against a real API server: the namespace's quota
// ConfigMap caps spec.size (denied with the webhook's message, as kubectl shows it) and
// gives the default size; the API server calls the app, served under @nestjs/testing.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { KubeApiError, OperatorModule, customResourceDefinition, webhookConfigurationsOf } from '@nestor/operator';
import { TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import { QUOTA_CONFIGMAP } from './memcached-quota.js';
import { MemcachedWebhookModule } from './memcached-webhook.module.js';
import { MemcachedV1beta1 } from './memcached-v1beta1.resource.js';
import { Memcached } from './memcached.resource.js';
import { MemcachedWebhook } from './memcached.webhook.js';

const VALIDATING = 'validate-cache-example-com-v1alpha1-memcached.nestor.dev';

let env: TestEnvironment;
let webhooks: LocalWebhooks;
let app: INestApplicationContext;
let ns: string;

const memcacheds = (name = '') => `/apis/cache.example.com/v1alpha1/namespaces/${ns}/memcacheds/${name}`;
const create = (name: string, spec: Partial<Memcached['spec']>, namespace = ns) =>
  env.client.request<Memcached>('POST', `/apis/cache.example.com/v1alpha1/namespaces/${namespace}/memcacheds`, {
    apiVersion: 'cache.example.com/v1alpha1',
    kind: 'Memcached',
    metadata: { name },
    spec,
  });
const quota = (data: Record<string, string>, namespace = ns) =>
  env.client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: QUOTA_CONFIGMAP },
    data,
  });

/** How the API server refused a call, as kubectl prints it; fails the test if it was admitted. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof KubeApiError) return { status: error.status, message: error.detail };
    throw error;
  }
  assert.fail('the API server admitted the request');
}

before(async () => {
  // Both versions, as memcached.e2e.test.ts installs it: on a shared control plane the last
  // CRD applied wins, and a v1alpha1-only one would stop v1beta1 being served to that file.
  env = await TestEnvironment.start({ crds: [customResourceDefinition(Memcached, MemcachedV1beta1)] });
  ns = await env.createNamespace('memcached-quota');
  const suffix = randomBytes(3).toString('hex');
  // Only this file's namespaces: another test's Memcacheds never reach this webhook.
  const namespaceSelector = {
    matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In' as const, values: [ns, `${ns}-free`] }],
  };
  const configurations = webhookConfigurationsOf([MemcachedWebhook], { name: `memcached-${suffix}` }).map((c) => ({
    ...c,
    webhooks: c.webhooks.map((w) => ({ ...w, namespaceSelector })),
  }));
  webhooks = await env.installWebhooks({ configurations });
  app = await Test.createTestingModule({
    imports: [
      OperatorModule.forRoot({
        kubeConfig: env.kubeConfig,
        metrics: { port: 0 },
        health: { port: 0 },
        webhooks: { host: webhooks.host, port: webhooks.port, certDir: webhooks.certDir },
      }),
      MemcachedWebhookModule,
    ],
  })
    .compile()
    .then((moduleRef) => moduleRef.init());
  await quota({ maxSize: '3', defaultSize: '2' });
  // The API server loads configurations asynchronously: wait until it calls the webhook.
  await waitFor(
    async () => (await refusal(create('probe', { size: 9 })).catch(() => undefined))?.message.includes('quota'),
    { timeoutMs: 30_000, what: 'the API server to call the Memcached webhook' },
  );
});

after(async () => {
  await app?.close();
  await webhooks?.uninstall();
  await env?.stop();
});

describe('Memcached admission', () => {
  it('denies a size over the namespace’s quota, with the webhook’s message', async () => {
    const { status, message } = await refusal(create('too-big', { size: 5 }));
    assert.equal(status, 422);
    assert.equal(
      message,
      `admission webhook "${VALIDATING}" denied the request: spec.size 5 exceeds the namespace's Memcached quota of 3 (ConfigMap memcached-quota)`,
    );
  });

  it('fills in the quota’s default size, and 1 in a namespace without a quota', async () => {
    const created = await create('defaulted', {});
    assert.equal(created.spec.size, 2);
    assert.equal(created.spec.containerPort, 11211, 'the schema’s default still applies');
    const free = await env.client
      .request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${ns}-free` } })
      .then(() => `${ns}-free`);
    assert.equal((await create('defaulted', {}, free)).spec.size, 1);
    assert.equal((await create('big', { size: 8 }, free)).spec.size, 8, 'no quota, no cap but the schema’s');
  });

  it('denies growing past the quota, allows shrinking, and reads a changed quota at once', async () => {
    await create('grows', { size: 3 });
    const patch = (size: number) =>
      env.client.request<Memcached>('PATCH', memcacheds('grows'), { spec: { size } }, 'application/merge-patch+json');
    assert.match((await refusal(patch(4))).message, /spec.size 4 exceeds the namespace's Memcached quota of 3/);
    assert.equal((await patch(1)).spec.size, 1);
    await env.client.request(
      'PATCH',
      `/api/v1/namespaces/${ns}/configmaps/${QUOTA_CONFIGMAP}`,
      { data: { maxSize: '6' } },
      'application/merge-patch+json',
    );
    assert.equal((await patch(6)).spec.size, 6);
  });
});
