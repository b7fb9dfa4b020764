import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request, type RequestOptions } from 'node:https';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ClusterConfig, KubeApiError, Transport } from '@nestor/core';
import { ApiClient } from './api-client.js';
import type { CustomResourceDefinition } from './crds.js';
import { TestEnvironment } from './environment.js';
import { waitFor } from './wait-for.js';

interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    ownerReferences?: Array<{ uid: string; controller?: boolean }>;
  };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

interface WatchEvent {
  type: string;
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

/**
 * Opens a watch over HTTPS with the kubeconfig's credentials, runs `opened` once the server
 * has answered, and collects events until `done` holds for one or the server ends the
 * stream (the path's timeoutSeconds bounds it). A refused watch resolves with its status.
 */
async function watch(
  kubeConfig: KubeConfig,
  path: string,
  done: (event: WatchEvent) => boolean,
  opened?: () => Promise<unknown>,
): Promise<{ status: number; events: WatchEvent[]; body: string }> {
  const options: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const url = new URL(path, kubeConfig.getCurrentCluster()!.server);
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, method: 'GET' }, (res) => {
      const status = res.statusCode ?? 0;
      const events: WatchEvent[] = [];
      let body = '';
      let pending = '';
      const finish = () => {
        resolve({ status, events, body });
        req.destroy();
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        if (status !== 200) return;
        pending += chunk;
        for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
          const line = pending.slice(0, end).trim();
          pending = pending.slice(end + 1);
          if (!line) continue;
          const event = JSON.parse(line) as WatchEvent;
          events.push(event);
          if (done(event)) finish();
        }
      });
      res.on('end', finish);
      res.on('error', reject);
      if (status === 200 && opened) {
        opened().catch((error: unknown) => {
          reject(error);
          req.destroy();
        });
      }
    });
    req.on('error', reject);
    req.end();
  });
}

/** True once the process has exited: no such pid, or a zombie nobody has reaped yet. */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw error;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return true; // exited between the two checks
  }
}

/** Live processes whose command line mentions `text` (e.g. a temp folder). */
async function processesMentioning(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || isGone(Number(entry))) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) found.push(`${entry}: ${cmdline.replaceAll('\0', ' ')}`);
  }
  return found;
}

/** Sets (or, with undefined, unsets) environment variables for the duration of `fn`. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(vars);
  try {
    return await fn();
  } finally {
    apply(saved);
  }
}

function listen(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

const GADGET_CRD_YAML = `# Not a CRD: loading skips it.
apiVersion: v1
kind: ConfigMap
metadata:
  name: not-a-crd
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.test.nestor.dev
spec:
  group: test.nestor.dev
  scope: Namespaced
  names: { plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: { type: integer }
`;

const GIZMO_CRD: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gizmos.test.nestor.dev' },
  spec: {
    group: 'test.nestor.dev',
    scope: 'Cluster',
    names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

describe('shared test environment', () => {
  let env: TestEnvironment;
  before(async () => {
    // Attaches to the run-wide control plane; on its own this starts one with kube-controller-manager.
    env = await TestEnvironment.start({ controllerManager: true });
  });
  after(() => env.stop());

  it('attaches to the run-wide control plane', () => {
    assert.equal(env.ownsControlPlane, false);
  });

  it('client: PATCH is a merge patch unless told otherwise; raw answers the status and the text', async () => {
    const ns = await env.createNamespace('client');
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    await env.client.request('POST', path, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { a: '1' },
    });
    const patched = await env.client.request<KubeObject>('PATCH', `${path}/c`, { data: { b: '2', a: null } });
    assert.deepEqual(patched.data, { b: '2' });
    const jsonPatch = await env.client.request<KubeObject>(
      'PATCH',
      `${path}/c`,
      [{ op: 'add', path: '/data/c', value: '3' }],
      'application/json-patch+json',
    );
    assert.deepEqual(jsonPatch.data, { b: '2', c: '3' });
    const missing = await env.client.raw('GET', `${path}/none`);
    assert.equal(missing.status, 404);
    assert.equal((JSON.parse(missing.text) as { reason: string }).reason, 'NotFound');
    const found = await env.client.raw('GET', `${path}/c`);
    assert.equal(found.status, 200);
    assert.equal((JSON.parse(found.text) as KubeObject).metadata.name, 'c');
  });

  it('runs kube-controller-manager: a Deployment gets a ReplicaSet, garbage-collected with it', async () => {
    const ns = await env.createNamespace('kcm');
    const apps = `/apis/apps/v1/namespaces/${ns}`;
    const deployment = await env.client.request<KubeObject>('POST', `${apps}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'registry.invalid/web:1' }] },
        },
      },
    });
    const ownedBy = (owner: KubeObject) => (object: KubeObject) =>
      object.metadata.ownerReferences?.some((ref) => ref.uid === owner.metadata.uid && ref.controller) === true;
    const replicaSet = await waitFor(
      async () =>
        (await env.client.request<{ items: KubeObject[] }>('GET', `${apps}/replicasets`)).items.find(
          ownedBy(deployment),
        ),
      { timeoutMs: 60_000, intervalMs: 200, what: 'the Deployment controller to create a ReplicaSet' },
    );
    const pods = `/api/v1/namespaces/${ns}/pods`;
    await waitFor(
      async () => (await env.client.request<{ items: KubeObject[] }>('GET', pods)).items.some(ownedBy(replicaSet)),
      { timeoutMs: 60_000, intervalMs: 200, what: 'the ReplicaSet controller to create a Pod' },
    );

    await env.client.request('DELETE', `${apps}/deployments/web`, {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      propagationPolicy: 'Background',
    });
    await waitFor(
      async () => (await env.client.raw('GET', `${apps}/replicasets/${replicaSet.metadata.name}`)).status === 404,
      { timeoutMs: 60_000, intervalMs: 200, what: 'the garbage collector to delete the ReplicaSet' },
    );
    await waitFor(async () => (await env.client.request<{ items: KubeObject[] }>('GET', pods)).items.length === 0, {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: "the garbage collector to delete the ReplicaSet's Pods",
    });
  });
});

describe('a private control plane (client-certificate auth)', () => {
  let env: TestEnvironment;
  let dir: string;
  let crdFile: string;
  let startMs: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nestor-env-test-'));
    crdFile = join(dir, 'gadgets.yaml');
    await writeFile(crdFile, GADGET_CRD_YAML);
    const started = Date.now();
    env = await TestEnvironment.start({ useExistingCluster: false, authentication: 'client-cert', crds: [crdFile] });
    startMs = Date.now() - started;
  });
  after(async () => {
    await env?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts its own etcd and kube-apiserver and authenticates the admin by client certificate', async (t) => {
    t.diagnostic(`TestEnvironment.start (etcd + kube-apiserver + 1 CRD, client-cert) took ${startMs} ms`);
    assert.equal(env.ownsControlPlane, true);
    assert.equal(env.pids.length, 2, 'etcd and kube-apiserver, no kube-controller-manager');
    assert.ok(env.pids.every((pid) => !isGone(pid)));

    const user = env.kubeConfig.getCurrentUser();
    assert.ok(user?.certData && user.keyData, 'the kubeconfig carries a client certificate and key');
    assert.equal(user.token, undefined);
    const review = await env.client.request<{ status: { userInfo: { username: string; groups?: string[] } } }>(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    );
    assert.equal(review.status.userInfo.username, 'admin');
    assert.ok(review.status.userInfo.groups?.includes('system:masters'));

    // Without the certificate the same request is not the admin's.
    const anonymous = new KubeConfig();
    anonymous.loadFromOptions({
      clusters: [{ name: 'c', server: env.server, caData: env.kubeConfig.getCurrentCluster()!.caData! }],
      users: [{ name: 'nobody' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'nobody' }],
      currentContext: 'c',
    });
    const stranger = await ApiClient.fromKubeConfig(anonymous);
    try {
      const { status } = await stranger.raw('GET', '/api/v1/namespaces');
      assert.ok(status === 401 || status === 403, `anonymous list of namespaces: HTTP ${status}`);
    } finally {
      stranger.close();
    }
  });

  it('is reached with a client certificate through Nestor’s ClusterConfig, as with client-node', async () => {
    const transport = await Transport.fromKubeConfig(ClusterConfig.fromFile(env.kubeconfigPath));
    try {
      const review = await transport.json<{ status: { userInfo: { username: string } } }>(
        'POST',
        '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
      );
      assert.equal(review.status.userInfo.username, 'admin');
    } finally {
      transport.close();
    }
  });

  it('serves a create/get/update/delete round trip of a ConfigMap in a fresh namespace', async () => {
    const ns = await env.createNamespace('crud');
    assert.match(ns, /^crud-[0-9a-f]{8}$/);
    const configMaps = `/api/v1/namespaces/${ns}/configmaps`;
    const created = await env.client.request<KubeObject>('POST', configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'round-trip' },
      data: { colour: 'red' },
    });
    assert.equal(created.metadata.namespace, ns);
    assert.ok(created.metadata.uid);

    const read = await env.client.request<KubeObject>('GET', `${configMaps}/round-trip`);
    assert.deepEqual(read.data, { colour: 'red' });
    assert.equal(read.metadata.resourceVersion, created.metadata.resourceVersion);

    const updated = await env.client.request<KubeObject>('PUT', `${configMaps}/round-trip`, {
      ...read,
      data: { colour: 'blue', size: 'L' },
    });
    assert.notEqual(updated.metadata.resourceVersion, read.metadata.resourceVersion);
    assert.deepEqual((await env.client.request<KubeObject>('GET', `${configMaps}/round-trip`)).data, {
      colour: 'blue',
      size: 'L',
    });
    await assert.rejects(
      env.client.request('PUT', `${configMaps}/round-trip`, read),
      (error: unknown) => error instanceof KubeApiError && error.status === 409,
      'an update from a stale resourceVersion conflicts',
    );

    await env.client.request('DELETE', `${configMaps}/round-trip`);
    await assert.rejects(
      env.client.request('GET', `${configMaps}/round-trip`),
      (error: unknown) => error instanceof KubeApiError && error.status === 404,
    );
  });

  it('streams a watch: the ADDED event of an object created while it is open', async () => {
    const ns = await env.createNamespace('watch');
    const configMaps = `/api/v1/namespaces/${ns}/configmaps`;
    const list = await env.client.request<{ metadata: { resourceVersion: string } }>('GET', configMaps);
    const result = await watch(
      env.kubeConfig,
      `${configMaps}?watch=true&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=60`,
      (event) => event.type === 'ADDED' && event.object.metadata.name === 'watched',
      () =>
        env.client.request('POST', configMaps, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'watched' },
          data: { seen: 'yes' },
        }),
    );
    assert.equal(result.status, 200, result.body);
    const added = result.events.find((event) => event.type === 'ADDED');
    assert.ok(added, `no ADDED event in ${JSON.stringify(result.events)}`);
    assert.equal(added.object.kind, 'ConfigMap');
    assert.equal(added.object.metadata.name, 'watched');
    assert.deepEqual(added.object.data, { seen: 'yes' });
  });

  it('installs CRDs from a YAML file and from an object, Established and served', async () => {
    // gadgets came from the file at start-up; gizmos come from an object now.
    await env.installCRDs([GIZMO_CRD]);
    await env.installCRDs([crdFile]); // installing again is harmless

    const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    for (const name of ['gadgets.test.nestor.dev', 'gizmos.test.nestor.dev']) {
      const crd = await env.client.request<{ status: { conditions?: Array<{ type: string; status: string }> } }>(
        'GET',
        `${crds}/${name}`,
      );
      assert.ok(
        crd.status.conditions?.some((c) => c.type === 'Established' && c.status === 'True'),
        `${name} is Established`,
      );
    }
    const notCrd = await env.client.raw('GET', '/api/v1/namespaces/default/configmaps/not-a-crd');
    assert.equal(notCrd.status, 404, 'only the CRDs of the file are installed');

    const ns = await env.createNamespace('crd');
    const gadgets = `/apis/test.nestor.dev/v1/namespaces/${ns}/gadgets`;
    await env.client.request('POST', gadgets, {
      apiVersion: 'test.nestor.dev/v1',
      kind: 'Gadget',
      metadata: { name: 'g1' },
      spec: { size: 3 },
    });
    assert.deepEqual((await env.client.request<KubeObject>('GET', `${gadgets}/g1`)).spec, { size: 3 });
    await assert.rejects(
      env.client.request('POST', gadgets, {
        apiVersion: 'test.nestor.dev/v1',
        kind: 'Gadget',
        metadata: { name: 'g2' },
        spec: { size: 'large' },
      }),
      (error: unknown) => error instanceof KubeApiError && error.status === 422,
      "the CRD's schema is enforced",
    );

    const gizmos = '/apis/test.nestor.dev/v1alpha1/gizmos';
    await env.client.request('POST', gizmos, {
      apiVersion: 'test.nestor.dev/v1alpha1',
      kind: 'Gizmo',
      metadata: { name: 'z1' },
      spec: { anything: ['goes'] },
    });
    assert.deepEqual((await env.client.request<KubeObject>('GET', `${gizmos}/z1`)).spec, { anything: ['goes'] });
  });

  it('is attached to, not started, with USE_EXISTING_CLUSTER and KUBECONFIG', async () => {
    const attached = await withEnv({ USE_EXISTING_CLUSTER: 'true', KUBECONFIG: env.kubeconfigPath }, () =>
      TestEnvironment.start(),
    );
    let ns: string | undefined;
    try {
      assert.equal(attached.ownsControlPlane, false);
      assert.equal(attached.server, env.server);
      assert.equal(attached.kubeconfigPath, env.kubeconfigPath);
      assert.deepEqual(attached.pids, []);
      ns = await attached.createNamespace('attached');
      assert.equal((await env.client.raw('GET', `/api/v1/namespaces/${ns}`)).status, 200);
      await assert.rejects(attached.restartApiServer(), /restartApiServer needs a control plane .*useExistingCluster/);
      await assert.rejects(attached.compactEtcd(), /compactEtcd needs a control plane .*useExistingCluster/);
    } finally {
      await attached.stop();
    }

    assert.ok(ns);
    // The namespace it created is deleted (Terminating here: this control plane has no
    // namespace controller to finish the deletion), and the cluster runs on.
    const { status, text } = await env.client.raw('GET', `/api/v1/namespaces/${ns}`);
    assert.ok(
      status === 404 || (status === 200 && (JSON.parse(text) as KubeObject).metadata.deletionTimestamp),
      `namespace ${ns} after stop(): HTTP ${status}: ${text.slice(0, 300)}`,
    );
    assert.ok(
      env.pids.every((pid) => !isGone(pid)),
      'the attached environment stopped no process',
    );
    assert.equal((await env.client.raw('GET', '/readyz')).status, 200);
  });

  it('keeps its data across restartApiServer, and the same kubeconfig reconnects', async (t) => {
    const ns = await env.createNamespace('restart');
    await env.client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kept' },
      data: { kept: 'yes' },
    });
    const fromFile = new KubeConfig();
    fromFile.loadFromFile(env.kubeconfigPath);
    const core = fromFile.makeApiClient(CoreV1Api);
    assert.equal((await core.readNamespacedConfigMap({ name: 'kept', namespace: ns })).data?.kept, 'yes');
    const [etcdPid, apiServerPid] = env.pids;

    const started = Date.now();
    await env.restartApiServer();
    t.diagnostic(`restartApiServer (SIGTERM, start, ready) took ${Date.now() - started} ms`);

    assert.equal(env.pids[0], etcdPid, 'etcd ran on');
    assert.notEqual(env.pids[1], apiServerPid, 'a new kube-apiserver process');
    assert.ok(apiServerPid !== undefined && isGone(apiServerPid), 'the old kube-apiserver is gone');
    // The same client objects and the kubeconfig written before the restart still work:
    // the API server kept its serving certificate.
    assert.equal((await core.readNamespacedConfigMap({ name: 'kept', namespace: ns })).data?.kept, 'yes');
    assert.deepEqual((await env.client.request<KubeObject>('GET', `/api/v1/namespaces/${ns}/configmaps/kept`)).data, {
      kept: 'yes',
    });
    const fresh = await ApiClient.fromKubeConfig(fromFile);
    try {
      assert.equal((await fresh.raw('GET', '/readyz')).status, 200);
    } finally {
      fresh.close();
    }
  });

  it('leaves the API server stopped from stopApiServer until startApiServer, data kept', async () => {
    const ns = await env.createNamespace('stop-start');
    await env.client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'kept' } });
    const apiServerPid = env.pids[1];

    await env.stopApiServer({ kill: true });
    await assert.rejects(env.stopApiServer(), /already stopped/, 'stopped twice: said so');
    assert.ok(apiServerPid !== undefined && isGone(apiServerPid), 'the kube-apiserver is gone');
    await assert.rejects(env.client.raw('GET', '/readyz', undefined, undefined, 1_000));

    await env.startApiServer();
    assert.equal((await env.client.raw('GET', '/readyz')).status, 200);
    assert.equal((await env.client.raw('GET', `/api/v1/namespaces/${ns}/configmaps/kept`)).status, 200);
    await assert.rejects(env.startApiServer(), /running; stopApiServer\(\) first/);
  });

  it('makes a watch from a compacted resourceVersion fail with 410 Gone after compactEtcd', async (t) => {
    const ns = await env.createNamespace('compact');
    const configMaps = `/api/v1/namespaces/${ns}/configmaps`;
    const created = await env.client.request<KubeObject>('POST', configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'history' },
      data: { step: '0' },
    });
    for (const step of ['1', '2', '3']) {
      await env.client.request('PATCH', `${configMaps}/history`, { data: { step } }, 'application/merge-patch+json');
    }
    const oldVersion = created.metadata.resourceVersion!;
    const watchPath = `${configMaps}?watch=true&resourceVersion=${oldVersion}&timeoutSeconds=60`;

    // Before compaction the history from that version is there.
    const replayed = await watch(
      env.kubeConfig,
      watchPath,
      (event) => event.type === 'MODIFIED' && event.object.data?.step === '3',
    );
    assert.equal(replayed.status, 200, replayed.body);
    assert.deepEqual(
      replayed.events.map((event) => `${event.type} ${event.object.data?.step}`),
      ['MODIFIED 1', 'MODIFIED 2', 'MODIFIED 3'],
    );

    const started = Date.now();
    const revision = await env.compactEtcd();
    t.diagnostic(`compactEtcd (with its kube-apiserver restart) took ${Date.now() - started} ms`);
    assert.ok(revision > Number(oldVersion), `compacted up to ${revision}, past ${oldVersion}`);

    // Gone: either refused outright, or an ERROR event with a 410 Status in the stream.
    const expired = await watch(env.kubeConfig, watchPath, (event) => event.type === 'ERROR');
    const gone =
      expired.status === 410 ||
      (expired.status === 200 && expired.events.some((event) => event.type === 'ERROR' && event.object.code === 410));
    assert.ok(gone, `expected 410 Gone, got HTTP ${expired.status}: ${expired.body.slice(0, 500)}`);
    // The objects themselves survive compaction.
    assert.deepEqual((await env.client.request<KubeObject>('GET', `${configMaps}/history`)).data, { step: '3' });
  });

  it('stops with no process and no file left behind', async (t) => {
    const pids = env.pids;
    const envDir = dirname(env.kubeconfigPath);
    assert.equal(pids.length, 2);
    assert.ok(pids.every((pid) => !isGone(pid)));
    assert.ok(existsSync(envDir));

    const started = Date.now();
    await env.stop();
    t.diagnostic(`stop took ${Date.now() - started} ms`);
    for (const pid of pids) assert.ok(isGone(pid), `process ${pid} is gone after stop()`);
    assert.equal(existsSync(envDir), false, `${envDir} is removed`);
    await env.stop(); // a second stop is harmless
  });
});

describe('start-up failures', () => {
  it('names the variable and path of a missing binary, at once', async () => {
    await withEnv({ TEST_ASSET_KUBE_APISERVER: '/nonexistent' }, () =>
      assert.rejects(TestEnvironment.start({ useExistingCluster: false }), (error: Error) => {
        assert.match(error.message, /^kube-apiserver not usable at \/nonexistent \(from TEST_ASSET_KUBE_APISERVER\)/);
        return true;
      }),
    );
  });

  it('names a port that is already taken', async () => {
    const { server, port } = await listen();
    try {
      await assert.rejects(
        TestEnvironment.start({ useExistingCluster: false, apiServerPort: port }),
        new RegExp(`^Error: port ${port} on 127\\.0\\.0\\.1, asked for the API server, is already in use`),
      );
      await assert.rejects(
        TestEnvironment.start({ useExistingCluster: false, etcdPort: port }),
        new RegExp(`^Error: port ${port} on 127\\.0\\.0\\.1, asked for the etcd, is already in use`),
      );
    } finally {
      server.close();
    }
  });

  it('reports a binary that exits at start-up with its output, and cleans up after it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nestor-failing-start-'));
    try {
      const stub = join(dir, 'kube-apiserver');
      await writeFile(stub, '#!/bin/sh\necho "stub kube-apiserver: cannot serve" >&2\nexit 3\n');
      await chmod(stub, 0o755);
      const scratch = join(dir, 'tmp');
      await mkdir(scratch);
      await withEnv({ TEST_ASSET_KUBE_APISERVER: stub, TMPDIR: scratch }, () =>
        assert.rejects(TestEnvironment.start({ useExistingCluster: false }), (error: Error) => {
          assert.match(error.message, /^kube-apiserver exited during start-up \(exit code 3\)/);
          assert.match(error.message, /stub kube-apiserver: cannot serve/);
          return true;
        }),
      );
      // etcd, started first, was stopped, and the environment's folder removed.
      assert.deepEqual(await readdir(scratch), []);
      assert.deepEqual(await processesMentioning(scratch), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a test process killed with SIGKILL', () => {
  it('leaves no control-plane process behind', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'nestor-killed-test-'));
    const script = join(dir, 'hold-environment.mjs');
    await writeFile(
      script,
      [
        `import { TestEnvironment } from ${JSON.stringify(new URL('./index.js', import.meta.url).href)};`,
        'const started = Date.now();',
        'const env = await TestEnvironment.start({ useExistingCluster: false, controllerManager: true });',
        'const report = { pids: env.pids, kubeconfigPath: env.kubeconfigPath, startMs: Date.now() - started };',
        'process.stdout.write(JSON.stringify(report) + "\\n");',
        'setInterval(() => {}, 1 << 30); // hold it until killed',
        '',
      ].join('\n'),
    );
    const child = spawn(process.execPath, [script], {
      env: { ...process.env, TMPDIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, signal) => resolve(signal)),
    );
    try {
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const line = await new Promise<string>((resolve, reject) => {
        let stdout = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
        });
        child.once('exit', (code, signal) =>
          reject(new Error(`the child exited (${signal ?? code}) before it started an environment:\n${stderr}`)),
        );
      });
      const report = JSON.parse(line) as { pids: number[]; kubeconfigPath: string; startMs: number };
      t.diagnostic(`TestEnvironment.start with kube-controller-manager took ${report.startMs} ms in the child`);
      assert.equal(report.pids.length, 3, 'etcd, kube-apiserver and kube-controller-manager');
      assert.ok(report.pids.every((pid) => !isGone(pid)));
      assert.ok(report.kubeconfigPath.startsWith(dir), 'its files are in the TMPDIR given');

      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');
      await waitFor(() => report.pids.every(isGone), {
        timeoutMs: 30_000,
        what: `control-plane processes ${report.pids.join(', ')} to die with their parent`,
      });
      assert.deepEqual(await processesMentioning(dir), []);
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
