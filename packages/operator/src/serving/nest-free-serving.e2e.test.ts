// A program on the Nest-free entry alone serves what a deployed operator serves, against the
// real API server: /metrics over HTTPS with its callers checked by a TokenReview and a
// SubjectAccessReview, /healthz and /readyz, and a validating webhook the API server calls.
// Nothing here imports @nestjs: the operator is built from `@nestor/operator/runtime`'s exports
// (`runtime-entry.ts`).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '../client/kinds.js';
import { freePort, TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import {
  ConfigMap,
  KubeApiError,
  Manager,
  MetricsAndProbesServer,
  OperatorMetrics,
  Transport,
  WebhookHttpsServer,
} from '../runtime-entry.js';
import { AdmissionDenied, webhookConfigurations } from '../webhooks/index.js';
import { parseMetrics, valueOf } from '../test-support/prometheus.js';
import { requestOnce } from '../test-support/request-once.js';

const SUFFIX = randomBytes(3).toString('hex');
const NS = `nest-free-${SUFFIX}`;
const CONTROLLER = `nest-free-configmaps-${SUFFIX}`;

let env: TestEnvironment;
let webhooks: LocalWebhooks;
let transport: Transport;
let manager: Manager;
let probes: MetricsAndProbesServer;
let server: WebhookHttpsServer;
const reconciled = new Set<string>();

interface Answer {
  status: number;
  text: string;
}

function get(port: number, path: string, options: { https?: boolean; token?: string } = {}): Promise<Answer> {
  return requestOnce({
    port,
    path,
    ...(options.https ? { ca: webhooks.caCertificate } : {}),
    ...(options.token ? { headers: { authorization: `Bearer ${options.token}` } } : {}),
  }).then(({ status, text }) => ({ status, text }));
}

const configMap = (name: string, data: Record<string, string>) =>
  env.client.request('POST', `/api/v1/namespaces/${NS}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data,
  });

before(async () => {
  env = await TestEnvironment.start();
  await env.client.request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
  });
  webhooks = await env.installWebhooks({
    configurations: webhookConfigurations(
      [
        {
          type: 'validating',
          resource: ConfigMap,
          operations: ['CREATE'],
          options: {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
            timeoutSeconds: 5,
          },
        },
      ],
      { name: `nest-free-${SUFFIX}` },
    ),
  });

  // The program: a transport, a manager with its metrics, the two servers beside it.
  transport = await Transport.fromKubeConfig(env.kubeConfig);
  const metrics = new OperatorMetrics();
  manager = new Manager({ transport, metrics });
  manager.addController({
    name: CONTROLLER,
    resource: ConfigMap,
    namespace: NS,
    reconcile: async ({ key }) => {
      reconciled.add(key);
      return {};
    },
  });
  server = new WebhookHttpsServer({ host: webhooks.host, port: webhooks.port, certDir: webhooks.certDir });
  server.validating<V1ConfigMap>(ConfigMap, {
    create: (object) => {
      if (object.data?.['forbidden'] !== undefined) {
        throw new AdmissionDenied(`configmap ${object.metadata?.name} has a forbidden key`);
      }
    },
  });
  probes = new MetricsAndProbesServer({
    manager,
    registry: metrics,
    transport,
    readiness: [server],
    // The webhook CA's certificate names 127.0.0.1: the scrape below can verify it.
    metrics: { host: '127.0.0.1', port: await freePort(), certDir: webhooks.certDir },
    health: { host: '127.0.0.1', port: await freePort() },
  });
  await server.start();
  await probes.start();
  await manager.start();
  // The API server reads configurations through an informer: wait until it calls the webhook.
  await waitFor(
    async () => {
      try {
        await env.client.request('POST', `/api/v1/namespaces/${NS}/configmaps?dryRun=All`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'probe' },
          data: { forbidden: 'x' },
        });
        return false;
      } catch (error) {
        return error instanceof KubeApiError && error.detail.includes('forbidden key');
      }
    },
    { timeoutMs: 30_000, what: 'the API server to call the webhook' },
  );
});

after(async () => {
  await manager?.stop();
  await probes?.stop();
  await server?.stop();
  transport?.close();
  await webhooks?.uninstall();
  await env?.client.request('DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
  await env?.stop();
});

describe('a Nest-free program serving metrics, probes and webhooks', () => {
  it('admits through its validating webhook, and denies with the handler’s message', async () => {
    await configMap('allowed', { ok: 'yes' });
    await assert.rejects(configMap('denied', { forbidden: 'yes' }), (error: unknown) => {
      assert.ok(error instanceof KubeApiError);
      assert.match(error.detail, /denied the request: configmap denied has a forbidden key$/);
      return true;
    });
    await waitFor(() => reconciled.has(`${NS}/allowed`), { timeoutMs: 30_000, what: 'the reconcile of allowed' });
  });

  it('answers the probes, the webhook server among the readiness checks', async () => {
    const port = probes.addresses.health!;
    assert.deepEqual(await get(port, '/healthz'), { status: 200, text: 'ok\n' });
    const ready = await get(port, '/readyz?verbose');
    assert.equal(ready.status, 200);
    assert.match(ready.text, /^\[\+\]webhook-server ok$/m);
  });

  it('serves /metrics only to a caller the API server authenticates and authorizes', async () => {
    const port = probes.addresses.metrics!;
    assert.equal((await get(port, '/metrics', { https: true })).status, 401);
    assert.equal((await get(port, '/metrics', { https: true, token: randomBytes(16).toString('hex') })).status, 401);
    // The environment's admin is in system:masters: the SubjectAccessReview allows it.
    const token = env.kubeConfig.getCurrentUser()?.token;
    assert.ok(token, 'the environment authenticates its admin with a bearer token');
    const scrape = await get(port, '/metrics', { https: true, token });
    assert.equal(scrape.status, 200);
    const reconciles = valueOf(parseMetrics(scrape.text), 'controller_runtime_reconcile_total', {
      controller: CONTROLLER,
      result: 'success',
    });
    assert.ok((reconciles ?? 0) >= 1, `reconciles counted: ${reconciles}`);
  });
});
