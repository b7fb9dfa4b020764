// What a user meets after `nestor manifests --watch-namespace ... --metrics-reader ...` and
// `kubectl apply -k`: the operator process, started with the generated Deployment's
// environment and the generated ServiceAccount's token (as the kubelet would start it),
// works in the one namespace through the generated Role and nowhere else; its probes
// answer where the Deployment probes; its /metrics, where the metrics Service points,
// refuses a caller without a token (401) or without the metrics-reader role (403) and
// serves the ServiceAccount bound to it; SIGTERM stops it within the pod's grace period.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import type { V1ConfigMap } from '@nestor/operator';
import { KindRegistry, resourcePath } from '@nestor/operator/runtime';
import { type KubeObject } from '@nestor/operator';
import { ApiClient, freePort, TestEnvironment, waitFor, type CustomResourceDefinition } from '@nestor/testing';
import { parse, parseAllDocuments } from 'yaml';
import { GADGET_GROUP, type Gadget } from './fixtures/gadget.js';

const here = dirname(fileURLToPath(import.meta.url));
const NAME = `gadget-deploy-${randomBytes(3).toString('hex')}`;

let env: TestEnvironment;
let operatorNamespace: string;
let watched: string;
let other: string;
let out: string;
let operator: ChildProcess | undefined;
let operatorLog = '';
const clusterScoped: string[] = [];

interface Container {
  env: { name: string; value?: string; valueFrom?: { fieldRef: { fieldPath: string } } }[];
  ports: { name: string; containerPort: number }[];
  readinessProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
}
interface DeploymentDoc extends KubeObject {
  spec: { template: { spec: { terminationGracePeriodSeconds: number; containers: Container[] } } };
}

function nestor(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'main.js'), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

async function kustomization(folder: string): Promise<KubeObject[]> {
  const { resources } = parse(await readFile(join(out, folder, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
  };
  const objects: KubeObject[] = [];
  for (const file of resources) {
    const text = await readFile(join(out, folder, file), 'utf8');
    objects.push(...parseAllDocuments(text).map((d) => d.toJS() as KubeObject));
  }
  return objects;
}

const kinds = new KindRegistry();
const pathOf = (object: KubeObject) =>
  resourcePath(kinds.forObject(object), object.metadata?.namespace, object.metadata?.name);

async function apply(object: KubeObject, query = ''): Promise<void> {
  await env.client.request(
    'PATCH',
    `${pathOf(object)}?fieldManager=kubectl&force=true${query}`,
    object,
    'application/apply-patch+yaml',
  );
  if (!object.metadata?.namespace && !query) clusterScoped.push(pathOf(object));
}

async function tokenOf(namespace: string, serviceAccount: string): Promise<string> {
  const review = await env.client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  );
  return review.status.token;
}

function kubeConfigFor(user: string, token: string): KubeConfig {
  const cluster = env.kubeConfig.getCurrentCluster()!;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: cluster.name, user }],
    currentContext: user,
  });
  return kubeConfig;
}

/** GET over HTTPS, the operator's self-signed certificate accepted, as the ServiceMonitor's insecureSkipVerify. */
function scrape(port: number, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        rejectUnauthorized: false,
        agent: false,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('GET /metrics timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function probe(port: number, path: string): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5_000) })).status;
  } catch {
    return 0;
  }
}

before(async () => {
  env = await TestEnvironment.start();
  operatorNamespace = await env.createNamespace('deploy-op');
  watched = await env.createNamespace('deploy-watched');
  other = await env.createNamespace('deploy-other');
  out = await mkdtemp(join(tmpdir(), 'nestor-deploy-e2e-'));
});

after(async () => {
  if (operator && operator.exitCode === null) operator.kill('SIGKILL');
  for (const path of clusterScoped) await env.client.raw('DELETE', path);
  await rm(out, { recursive: true, force: true });
  await env?.stop();
});

describe('the deployed operator, as nestor manifests configures it', () => {
  let deployment: DeploymentDoc;
  let metricsPort: number;
  let healthPort: number;

  it('generates and applies the objects for an operator that watches one namespace', async () => {
    // Free ports stand in for the pod's own network namespace: tests run side by side.
    const [metrics, health] = [await freePort(), await freePort()];
    const { code, stderr } = await nestor([
      'manifests',
      '--module',
      join(here, 'fixtures', 'app.module.js'),
      '--out',
      out,
      '--name',
      NAME,
      '--namespace',
      operatorNamespace,
      '--watch-namespace',
      watched,
      '--metrics-port',
      String(metrics),
      '--health-port',
      String(health),
      '--metrics-reader',
      `${operatorNamespace}/prometheus`,
    ]);
    assert.equal(code, 0, stderr);
    assert.match(stderr, new RegExp(`the controllers' Role in ${watched}`));

    await env.installCRDs((await kustomization('crds')) as unknown as CustomResourceDefinition[]);
    for (const object of await kustomization('operator')) {
      if (object.kind === 'Deployment') {
        deployment = object as DeploymentDoc;
        await apply(object, '&dryRun=All'); // no kubelet here: the test starts its process below
      } else await apply(object);
    }
    // The controllers' rules: a Role in the watched namespace, a ClusterRole only for the
    // cluster-scoped kind they read (Namespaces).
    const rbac = await kustomization('operator');
    const role = rbac.find((o) => o.kind === 'Role' && o.metadata!.name === NAME);
    assert.equal(role?.metadata?.namespace, watched);
    const clusterRole = rbac.find((o) => o.kind === 'ClusterRole' && o.metadata!.name === NAME) as
      (KubeObject & { rules: unknown[] }) | undefined;
    assert.deepEqual(clusterRole?.rules, [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
    ]);

    // The ports the Service and the probes name are the container's.
    const container = deployment.spec.template.spec.containers[0]!;
    const portNamed = (name: string) => container.ports.find((p) => p.name === name)!.containerPort;
    const [service] = await kustomization('operator').then((objects) =>
      objects.filter((o) => o.kind === 'Service' && o.metadata!.name === `${NAME}-metrics-service`),
    );
    const servicePort = (service as unknown as { spec: { ports: [{ port: number; targetPort: string }] } }).spec
      .ports[0];
    metricsPort = portNamed(servicePort.targetPort);
    healthPort = portNamed(container.readinessProbe.httpGet.port);
    assert.equal(metricsPort, metrics);
    assert.equal(servicePort.port, metrics);
    assert.equal(healthPort, health);
    assert.equal(portNamed(container.livenessProbe.httpGet.port), health);
  });

  it('runs with the Deployment’s environment and the ServiceAccount’s rights: works in its namespace, nowhere else', async () => {
    // The ServiceAccount's token, as its pod would mount it, in a kubeconfig file (KUBECONFIG).
    const token = await tokenOf(operatorNamespace, NAME);
    const kubeconfigPath = join(out, 'operator.kubeconfig');
    await writeFile(kubeconfigPath, kubeConfigFor(NAME, token).exportConfig(), { mode: 0o600 });
    const asOperator = await ApiClient.fromKubeConfig(kubeConfigFor(NAME, token));
    const gadgets = (ns: string) => `/apis/${GADGET_GROUP}/v1/namespaces/${ns}/gadgets`;
    // The RBAC authorizer sees new bindings through its informers: wait until it does.
    await waitFor(async () => (await asOperator.raw('GET', gadgets(watched))).status === 200, {
      what: 'the ServiceAccount to be allowed to list Gadgets in the watched namespace',
    });

    // As the kubelet: the container's env, fieldRefs resolved, nothing else of the test's.
    const container = deployment.spec.template.spec.containers[0]!;
    const fields: Record<string, string> = { 'metadata.namespace': operatorNamespace, 'metadata.name': `${NAME}-pod` };
    const podEnv: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: kubeconfigPath,
    };
    for (const variable of container.env) {
      podEnv[variable.name] = variable.value ?? fields[variable.valueFrom!.fieldRef.fieldPath]!;
    }
    assert.equal(podEnv.WATCH_NAMESPACE, watched);
    operator = spawn(process.execPath, [join(here, 'fixtures', 'operator-main.js')], {
      env: podEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    operator.stdout!.on('data', (chunk: Buffer) => (operatorLog += chunk.toString()));
    operator.stderr!.on('data', (chunk: Buffer) => (operatorLog += chunk.toString()));

    // Ready where the Deployment's readiness probe asks.
    const readiness = container.readinessProbe.httpGet.path;
    await waitFor(async () => (await probe(healthPort, readiness)) === 200 || operator!.exitCode !== null, {
      what: `${readiness} on the health port`,
      timeoutMs: 60_000,
    });
    assert.equal(operator.exitCode, null, `the operator exited:\n${operatorLog}`);
    assert.equal(await probe(healthPort, container.livenessProbe.httpGet.path), 200);

    // Its work in the watched namespace: its Namespace read (reads), a ConfigMap owned, status, finalizer, events.
    await env.client.request(
      'PATCH',
      `/api/v1/namespaces/${watched}`,
      { metadata: { annotations: { [`${GADGET_GROUP}/suffix`]: '!' } } },
      'application/merge-patch+json',
    );
    await env.client.request('POST', gadgets(watched), {
      apiVersion: `${GADGET_GROUP}/v1`,
      kind: 'Gadget',
      metadata: { name: 'one' },
      spec: { message: 'hi', copies: 2 },
    });
    const ready = await waitFor(
      async () => {
        const gadget = await env.client.request<Gadget>('GET', `${gadgets(watched)}/one`);
        return gadget.status?.phase === 'Ready' && gadget;
      },
      { what: 'the Gadget to be Ready' },
    ).catch((error: Error) => {
      throw new Error(`${error.message}\noperator log:\n${operatorLog.slice(-3000)}`);
    });
    assert.deepEqual(ready.metadata?.finalizers, [`${GADGET_GROUP}/finalizer`]);
    const configMap = await env.client.request<V1ConfigMap>(
      'GET',
      `/api/v1/namespaces/${watched}/configmaps/gadget-one`,
    );
    assert.deepEqual(configMap.data, { message: 'hihi!' }, 'the Namespace was read');

    // A Gadget elsewhere is not its business, and it could not see it if it tried.
    await env.client.request('POST', gadgets(other), {
      apiVersion: `${GADGET_GROUP}/v1`,
      kind: 'Gadget',
      metadata: { name: 'elsewhere' },
      spec: { message: 'no' },
    });

    // Leader election from LEADER_ELECT / LEADER_ELECTION_ID: the Lease in its own namespace.
    const lease = await env.client.request<{ spec?: { holderIdentity?: string } }>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${operatorNamespace}/leases/${NAME}`,
    );
    assert.ok(lease.spec?.holderIdentity, 'the Lease is held');

    const forbidden = async (method: string, path: string) => {
      const { status, text } = await asOperator.raw(method, path);
      assert.equal(status, 403, `${method} ${path} should be forbidden, got ${status}: ${text.slice(0, 200)}`);
    };
    await forbidden('GET', `/apis/${GADGET_GROUP}/v1/gadgets`);
    await forbidden('GET', gadgets(other));
    await forbidden('GET', gadgets(operatorNamespace));
    await forbidden('GET', `/api/v1/namespaces/${other}/configmaps`);
    await forbidden('GET', `/api/v1/namespaces/${other}/secrets`);
    await forbidden('GET', '/api/v1/secrets');
    await forbidden('GET', `/api/v1/namespaces/${watched}/secrets`);
    await forbidden('DELETE', `/api/v1/namespaces/${other}`);
    await forbidden('GET', `/api/v1/namespaces/${watched}/pods`);
    asOperator.close();

    const untouched = await env.client.request<Gadget>('GET', `${gadgets(other)}/elsewhere`);
    assert.equal(untouched.status, undefined);
    assert.equal(untouched.metadata?.finalizers, undefined);
  });

  it('refuses /metrics without a token (401) or the metrics-reader role (403), and serves the bound reader', async () => {
    const prometheus = 'prometheus'; // bound by the generated ClusterRoleBinding (--metrics-reader)
    for (const name of [prometheus, 'stranger']) {
      await env.client.request('POST', `/api/v1/namespaces/${operatorNamespace}/serviceaccounts`, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name },
      });
    }
    const anonymous = await scrape(metricsPort);
    assert.equal(anonymous.status, 401, anonymous.body);
    assert.doesNotMatch(anonymous.body, /controller_runtime/);

    const stranger = await scrape(metricsPort, await tokenOf(operatorNamespace, 'stranger'));
    assert.equal(stranger.status, 403, stranger.body);
    assert.doesNotMatch(stranger.body, /controller_runtime/);

    // The operator caches a denial for 10 s; the binding may take a moment to reach the authorizer.
    const token = await tokenOf(operatorNamespace, prometheus);
    const served = await waitFor(
      async () => {
        const reply = await scrape(metricsPort, token);
        return reply.status === 200 && reply;
      },
      { what: 'the metrics reader to be served', timeoutMs: 60_000 },
    );
    assert.match(served.body, /controller_runtime_reconcile_total\{controller="GadgetController",result="success"\}/);
  });

  it('stops on SIGTERM within the pod’s grace period, releasing its Lease', async () => {
    const grace = deployment.spec.template.spec.terminationGracePeriodSeconds;
    assert.equal(grace, 40, 'the default 30 s shutdown grace + 10 s');
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      operator!.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const started = performance.now();
    operator!.kill('SIGTERM');
    const { code, signal } = await exited;
    const seconds = (performance.now() - started) / 1000;
    // Nest's shutdown hooks close the application, then raise the signal again: the usual exit for SIGTERM.
    assert.ok(code === 0 || signal === 'SIGTERM', `exit code ${code}, signal ${signal}\n${operatorLog.slice(-2000)}`);
    assert.match(operatorLog, /manager stopped/, 'a clean stop, not a kill');
    assert.ok(seconds < grace, `stopped in ${seconds.toFixed(1)} s`);
    const lease = await env.client.request<{ spec?: { holderIdentity?: string } }>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${operatorNamespace}/leases/${NAME}`,
    );
    assert.equal(lease.spec?.holderIdentity, '', 'released');
  });
});
