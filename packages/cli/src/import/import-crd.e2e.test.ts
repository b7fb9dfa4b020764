// `nestor import crd` against a real API server: cert-manager's, Prometheus Operator's and
// Gateway API's CRDs installed from the copies the import vendored beside the types, the
// kinds read back from the cluster into the same files (the CRDs too) as from the files
// their projects publish, an operator that owns and watches the imported kinds applying
// them, and what the API server stored type-checked against the generated types.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Test, type TestingModule } from '@nestjs/testing';
import { OperatorModule, type KubeObject, type ResourceDescriptor } from '@nestor/operator';
import { resourcePath } from '@nestor/operator/runtime';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { Certificate } from '../fixtures/imported/cert-manager.io/certificate.v1.js';
import { HTTPRoute } from '../fixtures/imported/gateway.networking.k8s.io/http-route.v1.js';
import { ServiceMonitor } from '../fixtures/imported/monitoring.coreos.com/service-monitor.v1.js';
import { RouteController, SITE_LABEL, SiteModule } from '../fixtures/site.app.module.js';
import { typeCheck } from '../test-support/type-check.js';

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = join(here, '..', '..');
const golden = join(packageRoot, 'src', 'fixtures', 'imported');
const NO_HTTP = { metrics: { port: 0 }, health: { port: 0 } };

let env: TestEnvironment;
let namespace: string;
let out: string;

/** Runs the `nestor` bin as a user would. */
function nestor(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, '..', 'main.js'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every file under a folder, relative path -> content. */
async function filesIn(folder: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      files[path.slice(folder.length + 1)] = await readFile(path, 'utf8');
    }
  }
  return files;
}

/** The object as the API server stored it, raw JSON: no client in between. */
async function stored(kind: ResourceDescriptor, name: string): Promise<KubeObject> {
  const response = await env.client.raw('GET', resourcePath(kind, namespace, name));
  assert.equal(response.status, 200, `GET ${kind.kind} ${name}: ${response.status}`);
  return JSON.parse(response.text) as KubeObject;
}

before(async () => {
  env = await TestEnvironment.start();
  // The CRDs the import kept beside the types, as a project's tests install them.
  await env.installCRDs(
    ['cert-manager.io', 'monitoring.coreos.com', 'gateway.networking.k8s.io'].map((group) => join(golden, group)),
  );
  namespace = await env.createNamespace('import-crd');
  out = await mkdtemp(join(tmpdir(), 'nestor-import-crd-e2e-'));
});

after(async () => {
  await rm(out, { recursive: true, force: true });
  await env?.stop();
});

describe('nestor import crd on a real API server', () => {
  it('reads the CRDs from the cluster into the same files as from the files the projects publish', async () => {
    const names = [
      'certificates.cert-manager.io',
      'servicemonitors.monitoring.coreos.com',
      'httproutes.gateway.networking.k8s.io',
    ];
    const args = ['import', 'crd', '--kubeconfig', env.kubeconfigPath, '--dir', out];
    const first = await nestor([...args, ...names.flatMap((name) => ['--from-cluster', name])]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^nestor import crd: 3 kinds, 4 versions\n/);
    // The same bytes as from the projects' files: the types, and the CRDs in their canonical form.
    assert.deepEqual(await filesIn(join(out, 'src', 'kinds')), await filesIn(golden));

    const again = await nestor([...args, '--from-cluster', names[2]!]);
    assert.equal(again.stdout, 'nestor import crd: src/kinds is up to date (3 files); nothing to change.\n');

    const missing = await nestor([...args, '--from-cluster', 'gadgets.nowhere.example.com']);
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /has no CustomResourceDefinition gadgets\.nowhere\.example\.com: kubectl get crd lists those it has/,
    );
  });

  it('runs an operator that owns and watches the imported kinds, and what it applied type-checks as stored', async () => {
    let moduleRef: TestingModule | undefined;
    try {
      moduleRef = await Test.createTestingModule({
        imports: [
          OperatorModule.forRoot({ kubeConfig: env.kubeConfig, namespace, shutdownGraceMs: 10_000, ...NO_HTTP }),
          SiteModule.register(),
        ],
      }).compile();
      await moduleRef.init();
      const routes = moduleRef.get(RouteController);

      await env.client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'shop', labels: { [SITE_LABEL]: 'true' } },
        data: { host: 'shop.example.com', service: 'shop-frontend' },
      });
      const key = `${namespace}/shop`;
      // The HTTPRoute controller saw the route the site controller applied, with the CRD's defaults.
      await waitFor(() => routes.matches.get(key) === 'PathPrefix /', { what: 'the HTTPRoute to be reconciled' });
      // The Certificate's watch mapped it to the route of the same name.
      await waitFor(() => routes.certificates.has(key), { what: 'the Certificate to be watched' });

      const objects = {
        certificate: await stored(Certificate, 'shop'),
        serviceMonitor: await stored(ServiceMonitor, 'shop'),
        route: await stored(HTTPRoute, 'shop'),
      };
      for (const object of Object.values(objects)) {
        assert.equal(object.metadata?.ownerReferences?.[0]?.name, 'shop', `${object.kind} is owned by the site`);
      }

      // Owned: a deleted route is applied again.
      const uid = objects.route.metadata?.uid;
      await env.client.raw('DELETE', resourcePath(HTTPRoute, namespace, 'shop'));
      await waitFor(
        async () => {
          const response = await env.client.raw('GET', resourcePath(HTTPRoute, namespace, 'shop'));
          return response.status === 200 && (JSON.parse(response.text) as KubeObject).metadata?.uid !== uid;
        },
        { what: 'the deleted HTTPRoute to be applied again' },
      );

      // Read back through the generated types: every field the API server returned, defaults
      // included, is one the types know, with a type they allow.
      const files: Record<string, string> = {};
      for (const [path, text] of Object.entries(await filesIn(golden))) {
        if (path.endsWith('.ts')) files[`kinds/${path}`] = text;
      }
      const withoutDefaults = structuredClone(objects.route) as { spec: { rules: Array<{ matches?: unknown }> } };
      delete withoutDefaults.spec.rules[0]!.matches;
      files['stored.ts'] = [
        "import type { Certificate } from './kinds/cert-manager.io/certificate.v1.js';",
        "import type { HTTPRoute } from './kinds/gateway.networking.k8s.io/http-route.v1.js';",
        "import type { ServiceMonitor } from './kinds/monitoring.coreos.com/service-monitor.v1.js';",
        `export const certificate: Certificate = ${JSON.stringify(objects.certificate, null, 2)};`,
        `export const serviceMonitor: ServiceMonitor = ${JSON.stringify(objects.serviceMonitor, null, 2)};`,
        `export const route: HTTPRoute = ${JSON.stringify(objects.route, null, 2)};`,
        '// A route as it is written, before the API server fills in its defaults, is not one read back.',
        `// @ts-expect-error matches is defaulted: present on every route the API server returns`,
        `export const written: HTTPRoute = ${JSON.stringify(withoutDefaults)};`,
      ].join('\n');
      assert.deepEqual(await typeCheck(files), []);
    } finally {
      await moduleRef?.close();
    }
  });
});
