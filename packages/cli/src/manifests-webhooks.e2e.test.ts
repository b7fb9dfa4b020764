// `nestor manifests` for an operator with a webhook, against a real API server. With
// cert-manager (absent here) the built-in kinds are server-side dry-run applied and the
// cert-manager objects' shape checked (their CRDs are not installed). Self-managed, the
// objects are applied for real, and an app running as the generated ServiceAccount makes
// its Secret and patches the CA into its configurations with exactly those rights.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { KindRegistry, resourcePath } from '@nestor/operator/runtime';
import { OperatorModule, type KubeObject } from '@nestor/operator';
import { ApiClient, freePort, TestEnvironment, waitFor, type CustomResourceDefinition } from '@nestor/testing';
import { parse, parseAllDocuments } from 'yaml';
import { GadgetWebhook } from './fixtures/webhook-app.module.js';

const here = dirname(fileURLToPath(import.meta.url));
const NAME = `hooked-${randomBytes(3).toString('hex')}`;

let env: TestEnvironment;
let namespace: string;
const dirs: string[] = [];
const clusterScoped: KubeObject[] = [];

function nestor(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'main.js'), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** Generates into a new folder; returns the objects of a folder's kustomization. */
async function generate(extra: string[]): Promise<(folder: string) => Promise<KubeObject[]>> {
  const out = await mkdtemp(join(tmpdir(), 'nestor-webhook-manifests-'));
  dirs.push(out);
  const { code, stderr } = await nestor([
    'manifests',
    '--module',
    join(here, 'fixtures', 'webhook-app.module.js'),
    '--out',
    out,
    '--name',
    NAME,
    '--namespace',
    namespace,
    ...extra,
  ]);
  assert.equal(code, 0, stderr);
  return async (folder) => {
    const { resources } = parse(await readFile(join(out, folder, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
    };
    const objects: KubeObject[] = [];
    for (const file of resources) {
      const text = await readFile(join(out, folder, file), 'utf8');
      objects.push(...parseAllDocuments(text).map((d) => d.toJS() as KubeObject));
    }
    return objects;
  };
}

const kinds = new KindRegistry();
/** Cluster-scoped kinds the registry does not hold. */
const CONFIGURATIONS: Record<string, string> = {
  ValidatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  MutatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
};
const pathOf = (object: KubeObject) =>
  CONFIGURATIONS[object.kind!]
    ? `${CONFIGURATIONS[object.kind!]}/${object.metadata!.name}`
    : resourcePath(kinds.forObject(object), object.metadata?.namespace, object.metadata?.name);

async function apply(object: KubeObject, dryRun: boolean): Promise<void> {
  await env.client.request(
    'PATCH',
    `${pathOf(object)}?fieldManager=kubectl&force=true${dryRun ? '&dryRun=All' : ''}`,
    object,
    'application/apply-patch+yaml',
  );
  if (!dryRun && !object.metadata?.namespace) clusterScoped.push(object);
}

before(async () => {
  env = await TestEnvironment.start();
  namespace = await env.createNamespace('hooked');
});

after(async () => {
  for (const object of clusterScoped) await env.client.raw('DELETE', pathOf(object));
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  await env?.stop();
});

describe('nestor manifests for an operator with webhooks, on a real API server', () => {
  it('with cert-manager: the API server accepts the Service, configurations, RBAC and Deployment', async () => {
    const folder = await generate([]);
    await env.installCRDs((await folder('crds')) as unknown as CustomResourceDefinition[]);
    const operator = await folder('operator');
    const certManager = operator.filter((o) => o.apiVersion?.startsWith('cert-manager.io/'));
    assert.deepEqual(
      certManager.map((o) => `${o.kind} ${o.metadata?.name}`),
      // cert-manager in use: the metrics certificate comes from it too.
      [`Issuer ${NAME}-selfsigned-issuer`, `Certificate ${NAME}-serving-cert`, `Certificate ${NAME}-metrics-certs`],
    );
    for (const object of operator.filter((o) => !certManager.includes(o))) await apply(object, true);
    const kindsApplied = operator.filter((o) => !certManager.includes(o)).map((o) => o.kind);
    for (const kind of ['Service', 'ValidatingWebhookConfiguration', 'Deployment'])
      assert.ok(kindsApplied.includes(kind));

    // The webhook port open to all, /metrics to labelled namespaces: stored as written.
    const policies = await folder('network-policy');
    assert.deepEqual(
      policies.map((o) => o.metadata?.name),
      [`${NAME}-allow-metrics-traffic`, `${NAME}-allow-webhook-traffic`],
    );
    for (const policy of policies) {
      await apply(policy, false);
      const stored = await env.client.request<KubeObject & { spec: unknown }>('GET', pathOf(policy));
      assert.deepEqual(stored.spec, (policy as KubeObject & { spec: unknown }).spec);
    }
  });

  it('self-managed: the operator, as its ServiceAccount, makes its Secret and patches its configurations, and may do nothing more', async () => {
    const folder = await generate(['--webhook-certificates', 'self-managed']);
    const operator = await folder('operator');
    assert.ok(!operator.some((o) => o.apiVersion?.startsWith('cert-manager.io/')));
    for (const object of operator) await apply(object, object.kind === 'Deployment');

    // The settings the Deployment gives the operator, as its environment.
    const deployment = operator.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    };
    const env_ = Object.fromEntries(
      deployment.spec.template.spec.containers[0]!.env.filter((e) => e.value).map((e) => [e.name, e.value!]),
    );
    assert.equal(env_.WEBHOOK_CERTIFICATES, 'self-managed');

    const request = await env.client.request<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/${NAME}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    );
    const cluster = env.kubeConfig.getCurrentCluster()!;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [cluster],
      users: [{ name: NAME, token: request.status.token }],
      contexts: [{ name: NAME, cluster: cluster.name, user: NAME }],
      currentContext: NAME,
    });
    const asOperator = await ApiClient.fromKubeConfig(kubeConfig);
    const secret = `/api/v1/namespaces/${namespace}/secrets/${env_.WEBHOOK_SECRET_NAME}`;
    // The RBAC authorizer sees new bindings through its informers: wait until it does.
    await waitFor(async () => (await asOperator.raw('GET', secret)).status === 404, {
      what: 'the ServiceAccount to be allowed to read its Secret',
    });

    const healthPort = await freePort();
    let app: INestApplicationContext | undefined;
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [
          OperatorModule.forRoot({
            kubeConfig,
            metrics: { port: 0 },
            health: { port: healthPort, host: '127.0.0.1' },
            readFlags: false,
            webhooks: {
              host: '127.0.0.1',
              port: await freePort(),
              certificates: 'self-managed',
              selfManaged: {
                namespace,
                secretName: env_.WEBHOOK_SECRET_NAME!,
                serviceName: env_.WEBHOOK_SERVICE_NAME!,
                configurationName: env_.WEBHOOK_CONFIGURATION_NAME!,
              },
            },
          }),
        ],
        providers: [GadgetWebhook],
      }).compile();
      app = await moduleRef.init();
      await waitFor(async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status === 200, {
        what: 'the operator to be ready, its caBundle patched',
      });
      const stored = await env.client.request<{ data: Record<string, string> }>('GET', secret);
      const configuration = await env.client.request<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(
        'GET',
        `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${env_.WEBHOOK_CONFIGURATION_NAME}`,
      );
      assert.equal(configuration.webhooks[0]!.clientConfig.caBundle, stored.data['ca.crt']);

      const forbidden = async (method: string, path: string) => {
        const { status } = await asOperator.raw(method, path);
        assert.equal(status, 403, `${method} ${path}`);
      };
      await forbidden('GET', `/api/v1/namespaces/${namespace}/secrets`);
      await forbidden('GET', `/api/v1/namespaces/${namespace}/secrets/other`);
      await forbidden('DELETE', secret);
      await forbidden('GET', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations');
      await forbidden('GET', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/other');
    } finally {
      await app?.close();
      asOperator.close();
    }
  });
});
