// `nestor manifests` end to end: the generated kustomizations (CRDs, namespace, operator)
// are applied to a real API server in the order the output gives, an operator running as
// the generated ServiceAccount (a token from the TokenRequest API) does all its work with
// exactly those rights, and no more, and deleting the operator leaves the CRDs, the
// custom resources and the namespace.
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
import type { CoreV1Event, V1ConfigMap } from '@nestor/operator';
import { Test, type TestingModule } from '@nestjs/testing';
import { KindRegistry, resourcePath } from '@nestor/operator/runtime';
import { OperatorModule, type KubeObject } from '@nestor/operator';
import { ApiClient, TestEnvironment, waitFor, type CustomResourceDefinition } from '@nestor/testing';
import { parse, parseAllDocuments } from 'yaml';
import { GadgetModule } from './fixtures/app.module.js';
import { GADGET_GROUP, GadgetController, type Gadget } from './fixtures/gadget.js';

/** Tests run many operators at once: no metrics or probe servers on fixed ports. */
const NO_HTTP = { metrics: { port: 0 }, health: { port: 0 } };

const here = dirname(fileURLToPath(import.meta.url));
const NAME = `gadget-op-${randomBytes(3).toString('hex')}`;

let env: TestEnvironment;
let namespace: string;
let out: string;
const applied: KubeObject[] = [];

/** Runs the `nestor` bin as a user would. */
function nestor(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'main.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function objectsIn(file: string): Promise<KubeObject[]> {
  return parseAllDocuments(await readFile(join(out, file), 'utf8')).map((d) => d.toJS() as KubeObject);
}

/** What `kubectl apply -k` or `kubectl delete -k` on a generated folder touches. */
async function kustomization(folder: string): Promise<KubeObject[]> {
  const { resources } = parse(await readFile(join(out, folder, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
  };
  const objects: KubeObject[] = [];
  for (const file of resources) objects.push(...(await objectsIn(join(folder, file))));
  return objects;
}

const kinds = new KindRegistry();
const pathOf = (object: KubeObject) =>
  resourcePath(kinds.forObject(object), object.metadata?.namespace, object.metadata?.name);

/** Server-side apply, as `kubectl apply --server-side` does. */
async function apply(object: KubeObject, query = ''): Promise<void> {
  await env.client.request(
    'PATCH',
    `${pathOf(object)}?fieldManager=kubectl&force=true${query}`,
    object,
    'application/apply-patch+yaml',
  );
}

/** A KubeConfig for the ServiceAccount: a token from the TokenRequest API, the admin's server and CA. */
async function serviceAccountKubeConfig(serviceAccount: string): Promise<KubeConfig> {
  const request = await env.client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  );
  const cluster = env.kubeConfig.getCurrentCluster()!;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: [{ name: serviceAccount, token: request.status.token }],
    contexts: [{ name: serviceAccount, cluster: cluster.name, user: serviceAccount }],
    currentContext: serviceAccount,
  });
  return kubeConfig;
}

before(async () => {
  env = await TestEnvironment.start();
  // Made by the generated namespace kustomization (--create-namespace).
  namespace = `cli-e2e-${randomBytes(4).toString('hex')}`;
  out = await mkdtemp(join(tmpdir(), 'nestor-cli-e2e-'));
});

after(async () => {
  for (const object of applied.filter((o) => !o.metadata?.namespace)) {
    await env.client.raw('DELETE', pathOf(object));
  }
  await rm(out, { recursive: true, force: true });
  await env?.stop();
});

describe('nestor manifests on a real API server', () => {
  it('writes kustomizations the API server accepts, applied in order: CRDs, namespace, operator', async () => {
    const { code, stderr } = await nestor([
      'manifests',
      '--module',
      join(here, 'fixtures', 'app.module.js'),
      '--out',
      out,
      '--name',
      NAME,
      '--namespace',
      namespace,
      '--image',
      'registry.example/gadget-operator:1.0.0',
      '--create-namespace',
    ]);
    assert.equal(code, 0, stderr);
    assert.match(
      stderr,
      /install, in order: kubectl apply -k \S+\/crds && kubectl apply -k \S+\/namespace && kubectl apply -k \S+\/operator && kubectl apply -k \S+\/network-policy/,
    );

    const crds = (await kustomization('crds')) as unknown as CustomResourceDefinition[];
    assert.deepEqual(
      crds.map((c) => c.metadata.name),
      [`gadgets.${GADGET_GROUP}`],
    );
    await env.installCRDs(crds);

    for (const object of await kustomization('namespace')) {
      await apply(object);
      applied.push(object);
    }
    assert.equal((await env.client.raw('GET', `/api/v1/namespaces/${namespace}`)).status, 200);

    for (const object of await kustomization('operator')) {
      if (object.kind === 'Deployment') {
        // Valid, but only a dry run: this control plane runs no kubelet.
        await apply(object, '&dryRun=All');
        continue;
      }
      await apply(object);
      applied.push(object);
    }
  });

  it('writes NetworkPolicies the API server stores as written, in a kustomization of their own', async () => {
    const policies = await kustomization('network-policy');
    assert.deepEqual(
      policies.map((o) => `${o.kind}/${o.metadata?.name}`),
      [`NetworkPolicy/${NAME}-allow-metrics-traffic`],
    );
    for (const policy of policies) {
      // Stored with no network plugin: the API server validates it, nothing enforces it here.
      await apply(policy);
      const stored = await env.client.request<KubeObject & { spec: unknown }>('GET', pathOf(policy));
      assert.deepEqual(stored.spec, (policy as KubeObject & { spec: unknown }).spec);
    }
  });

  it('lets an operator running as the ServiceAccount do all its work, and nothing else', async () => {
    const kubeConfig = await serviceAccountKubeConfig(NAME);
    const asOperator = await ApiClient.fromKubeConfig(kubeConfig);
    const gadgets = `/apis/${GADGET_GROUP}/v1/namespaces/${namespace}/gadgets`;
    // The RBAC authorizer sees new bindings through its informers: wait until it does.
    await waitFor(async () => (await asOperator.raw('GET', gadgets)).status === 200, {
      what: 'the ServiceAccount to be allowed to list Gadgets',
    });

    let moduleRef: TestingModule | undefined;
    try {
      moduleRef = await Test.createTestingModule({
        imports: [
          OperatorModule.forRoot({ kubeConfig, namespace, shutdownGraceMs: 10_000, ...NO_HTTP }),
          GadgetModule.register(),
        ],
      }).compile();
      await moduleRef.init();
      const controller = moduleRef.get(GadgetController);

      await env.client.request('POST', gadgets, {
        apiVersion: `${GADGET_GROUP}/v1`,
        kind: 'Gadget',
        metadata: { name: 'one' },
        spec: { message: 'hi', copies: 2 },
      });

      // An owned ConfigMap, applied with an owner reference.
      const configMapPath = `/api/v1/namespaces/${namespace}/configmaps/gadget-one`;
      const configMap = await waitFor(
        async () =>
          (await env.client.raw('GET', configMapPath)).status === 200 &&
          env.client.request<V1ConfigMap>('GET', configMapPath),
        { what: 'the owned ConfigMap' },
      );
      assert.deepEqual(configMap.data, { message: 'hihi' });
      assert.equal(configMap.metadata?.ownerReferences?.[0]?.kind, 'Gadget');
      assert.equal(configMap.metadata?.ownerReferences?.[0]?.controller, true);

      // Its status patched, its finalizer added.
      const ready = await waitFor(
        async () => {
          const gadget = await env.client.request<Gadget>('GET', `${gadgets}/one`);
          return gadget.status?.phase === 'Ready' && gadget;
        },
        { what: 'the Gadget status to be Ready' },
      );
      assert.equal(ready.status?.configMap, 'gadget-one');
      assert.deepEqual(ready.metadata?.finalizers, [`${GADGET_GROUP}/finalizer`]);

      // An event recorded.
      const eventsOf = async (reason: string) =>
        (
          await env.client.request<{ items: CoreV1Event[] }>(
            'GET',
            `/api/v1/namespaces/${namespace}/events?fieldSelector=involvedObject.name=one,reason=${reason}`,
          )
        ).items;
      await waitFor(async () => (await eventsOf('Reconciled')).length > 0, { what: 'a Reconciled event' });

      // On delete, the finalizer runs and is removed, so the Gadget goes.
      await env.client.request('DELETE', `${gadgets}/one`);
      await waitFor(async () => (await env.client.raw('GET', `${gadgets}/one`)).status === 404, {
        what: 'the Gadget to be deleted once its finalizer ran',
      });
      assert.deepEqual(controller.cleaned, ['one']);
      // Events are written in the background: they may land just after.
      await waitFor(async () => (await eventsOf('CleanedUp')).length > 0, { what: 'a CleanedUp event' });

      // Leader election's Lease, in the operator's namespace only.
      const leases = (ns: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
      const lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: NAME },
        spec: { holderIdentity: 'a' },
      };
      const created = await asOperator.request<KubeObject>('POST', leases(namespace), lease);
      await asOperator.request('GET', `${leases(namespace)}/${NAME}`);
      await asOperator.request('PUT', `${leases(namespace)}/${NAME}`, { ...created, spec: { holderIdentity: 'b' } });

      // Anything else is forbidden.
      const forbidden = async (method: string, path: string, body?: unknown) => {
        const { status, text } = await asOperator.raw(
          method,
          path,
          body === undefined ? undefined : JSON.stringify(body),
        );
        assert.equal(status, 403, `${method} ${path} should be forbidden, got ${status}: ${text.slice(0, 200)}`);
        assert.match(text, new RegExp(`system:serviceaccount:${namespace}:${NAME}`));
      };
      await forbidden('GET', `/api/v1/namespaces/${namespace}/secrets`);
      await forbidden('GET', '/api/v1/secrets');
      // Namespaces are only read (`reads: [Namespace]`): get, list and watch, nothing more.
      assert.equal((await asOperator.raw('GET', `/api/v1/namespaces/${namespace}`)).status, 200);
      await forbidden('DELETE', `/api/v1/namespaces/${namespace}`);
      await forbidden('POST', gadgets, {
        apiVersion: `${GADGET_GROUP}/v1`,
        kind: 'Gadget',
        metadata: { name: 'x' },
        spec: { message: 'x' },
      });
      await forbidden('DELETE', `${gadgets}/one`);
      await forbidden('POST', `/api/v1/namespaces/${namespace}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'x' },
      });
      await forbidden('DELETE', `/api/v1/namespaces/${namespace}/events/x`);
      await forbidden('POST', leases('default'), lease);
      await forbidden('DELETE', `${leases(namespace)}/${NAME}`);
      await forbidden('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
      await forbidden('GET', '/apis/apps/v1/deployments');
    } finally {
      await moduleRef?.close();
      asOperator.close();
    }
  });

  it('refuses an operator that installs its own CRDs under this role, saying why', async () => {
    const kubeConfig = await serviceAccountKubeConfig(NAME);
    const moduleRef = await Test.createTestingModule({
      imports: [
        OperatorModule.forRoot({ kubeConfig, namespace, installCustomResources: true, ...NO_HTTP }),
        GadgetModule.register(),
      ],
    }).compile();
    await assert.rejects(
      moduleRef.init(),
      (error: unknown) =>
        error instanceof Error &&
        /cannot install the CustomResourceDefinition gadgets\.clitest\.nestor\.dev: the operator's identity may not patch customresourcedefinitions/.test(
          error.message,
        ) &&
        /nestor manifests/.test(error.message),
    );
    await moduleRef.close();
  });

  it('deletes the operator alone with its kustomization: the namespace, the CRDs and the custom resources stay', async () => {
    const gadgets = `/apis/${GADGET_GROUP}/v1/namespaces/${namespace}/gadgets`;
    await env.client.request('POST', gadgets, {
      apiVersion: `${GADGET_GROUP}/v1`,
      kind: 'Gadget',
      metadata: { name: 'kept' },
      spec: { message: 'still here' },
    });

    // As `kubectl delete -k <out>/operator` does: every object the kustomization lists.
    const operator = await kustomization('operator');
    assert.ok(!operator.some((o) => o.kind === 'Namespace' || o.kind === 'CustomResourceDefinition'));
    for (const object of operator) {
      const { status } = await env.client.raw('DELETE', pathOf(object));
      // The Deployment was only a dry run.
      assert.equal(status, object.kind === 'Deployment' ? 404 : 200, `DELETE ${object.kind}/${object.metadata?.name}`);
    }
    for (const object of operator) {
      await waitFor(async () => (await env.client.raw('GET', pathOf(object))).status === 404, {
        what: `${object.kind}/${object.metadata?.name} to be deleted`,
      });
    }

    const ns = await env.client.request<{ status?: { phase?: string } }>('GET', `/api/v1/namespaces/${namespace}`);
    assert.equal(ns.status?.phase, 'Active');
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${GADGET_GROUP}`;
    const crd = await env.client.request<KubeObject>('GET', crdPath);
    assert.equal(crd.metadata?.deletionTimestamp, undefined);
    const kept = await env.client.request<Gadget>('GET', `${gadgets}/kept`);
    assert.equal(kept.metadata?.deletionTimestamp, undefined);
  });
});
