// `nestor migrate-storage` as a Job runs it: the bin, a kubeconfig of a ServiceAccount bound
// to exactly the rights nestor manifests grants the migration, against a real API server: a
// kind stored as v1beta1 gets v1 as its storage version; the command rewrites its objects,
// trims storedVersions, and v1beta1 can then be dropped (the API server refuses it before).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { storageMigrationRules } from '@nestor/operator/manifests';
import { parallel, TestEnvironment, waitFor } from '@nestor/testing';

const here = dirname(fileURLToPath(import.meta.url));
const GROUP = `migrate-${randomBytes(3).toString('hex')}.nestor.dev`;
const CRD = `gears.${GROUP}`;
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`;

let env: TestEnvironment;
let ns: string;
let dir: string;

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

const version = (name: string, storage: boolean) => ({
  name,
  served: true,
  storage,
  schema: {
    openAPIV3Schema: {
      type: 'object',
      properties: { spec: { type: 'object', properties: { teeth: { type: 'integer' } } } },
    },
  },
});

interface Crd {
  spec: { versions: unknown[] };
  status: { storedVersions: string[] };
}

/** A kubeconfig file for a new ServiceAccount bound to the migration's rules alone. */
async function migratorKubeconfig(): Promise<string> {
  const name = 'gear-migrator';
  await env.client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name } });
  await env.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: `${CRD}-migrator` },
    rules: storageMigrationRules([{ metadata: { name: CRD }, spec: { group: GROUP, names: { plural: 'gears' } } }]),
  });
  await env.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: `${CRD}-migrator` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${CRD}-migrator` },
    subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
  });
  const { status } = await env.client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  );
  const cluster = env.kubeConfig.getCurrentCluster()!;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'test', server: cluster.server, caData: cluster.caData, skipTLSVerify: false }],
    users: [{ name, token: status.token }],
    contexts: [{ name: 'test', cluster: 'test', user: name }],
    currentContext: 'test',
  });
  const path = join(dir, 'migrator.kubeconfig');
  await writeFile(path, kubeConfig.exportConfig(), { mode: 0o600 });
  return path;
}

before(async () => {
  env = await TestEnvironment.start();
  ns = await env.createNamespace('migrate-cli');
  dir = await mkdtemp(join(tmpdir(), 'nestor-migrate-'));
});
after(async () => {
  await env?.client.raw('DELETE', CRD_PATH);
  await rm(dir, { recursive: true, force: true });
  await env?.stop();
});

describe('nestor migrate-storage', () => {
  it('rewrites the objects of a kind in its new storage version and trims storedVersions, with the rights manifests grant', async () => {
    await env.installCRDs([
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: CRD },
        spec: {
          group: GROUP,
          scope: 'Namespaced',
          names: { plural: 'gears', singular: 'gear', kind: 'Gear', listKind: 'GearList' },
          versions: [version('v1beta1', true)],
        },
      },
    ]);
    await parallel(
      Array.from({ length: 120 }, (_, i) => `gear-${i}`),
      8,
      (name) =>
        env.client.request('POST', `/apis/${GROUP}/v1beta1/namespaces/${ns}/gears`, {
          apiVersion: `${GROUP}/v1beta1`,
          kind: 'Gear',
          metadata: { name },
          spec: { teeth: 12 },
        }),
    );
    const crd = await env.client.request<Crd>('GET', CRD_PATH);
    await env.client.request('PUT', CRD_PATH, {
      ...crd,
      spec: { ...crd.spec, versions: [version('v1beta1', false), version('v1', true)] },
    });
    const dropV1beta1 = async () => {
      const now = await env.client.request<Crd>('GET', CRD_PATH);
      return env.client.raw('PUT', CRD_PATH, { ...now, spec: { ...now.spec, versions: [version('v1', true)] } });
    };
    assert.equal((await dropV1beta1()).status, 422, 'v1beta1 is a stored version: the API server refuses to drop it');

    const kubeconfig = await migratorKubeconfig();
    // The RBAC authorizer sees new bindings through its informers: the first run may be refused.
    let result = await nestor([
      'migrate-storage',
      '--kind',
      CRD,
      '--kubeconfig',
      kubeconfig,
      '--writes-per-second',
      '200',
    ]);
    await waitFor(
      async () => {
        if (result.code === 0) return true;
        assert.match(result.stderr, /forbidden|Forbidden|403/, result.stderr);
        result = await nestor([
          'migrate-storage',
          '--kind',
          CRD,
          '--kubeconfig',
          kubeconfig,
          '--writes-per-second',
          '200',
        ]);
        return result.code === 0;
      },
      { what: 'the migration run with the ServiceAccount’s rights' },
    );
    assert.match(
      result.stdout,
      new RegExp(
        `^${CRD.replaceAll('.', '\\.')}: migrated to v1: 120 objects \\(120 rewritten, 0 already current, 0 gone, 0 failed\\) in [\\d.]+ s; storedVersions \\[v1\\]\\n$`,
      ),
    );
    assert.match(result.stderr, /storage-version migration of .* done/);
    assert.deepEqual((await env.client.request<Crd>('GET', CRD_PATH)).status.storedVersions, ['v1']);

    // Again: nothing to do. Then the old version can go.
    const again = await nestor(['migrate-storage', '--kind', CRD, '--kubeconfig', kubeconfig]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, `${CRD}: nothing to migrate, storedVersions [v1]\n`);
    const dropped = await dropV1beta1();
    assert.equal(dropped.status, 200, dropped.text);
  });

  it('fails (exit 1), naming it, for a CRD that does not exist', async () => {
    const { code, stderr } = await nestor([
      'migrate-storage',
      '--kind',
      `nothings.${GROUP}`,
      '--kubeconfig',
      env.kubeconfigPath,
    ]);
    assert.equal(code, 1);
    assert.match(stderr, new RegExp(`nothings\\.${GROUP.replaceAll('.', '\\.')}: there is no CRD named`));
  });
});
