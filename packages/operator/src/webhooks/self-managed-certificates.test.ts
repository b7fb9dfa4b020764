import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { KubeApiError, type RequestOptions } from '@nestor/core';
import type { ApiTransport } from './ca-bundle-injection.js';
import { SelfManagedCertificates } from './self-managed-certificates.js';

interface Stored {
  metadata: { name: string; resourceVersion?: string };
  [key: string]: unknown;
}

/** Enough of an API server for Secrets and caBundle patches: resourceVersions, 409s, JSON Patch with test. */
class FakeApi implements ApiTransport {
  readonly objects = new Map<string, Stored>();
  /** A stored object, typed as the test reads it. */
  get<T>(path: string): T {
    return this.objects.get(path) as unknown as T;
  }
  readonly writes: string[] = [];
  private version = 1;

  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    await new Promise((resolve) => setImmediate(resolve)); // let concurrent callers interleave
    const body = options.body as Stored;
    const fail = (status: number, reason: string) => {
      throw new KubeApiError(status, reason, `${reason} ${path}`, method, path);
    };
    if (method === 'GET') {
      const found = this.objects.get(path);
      if (!found) fail(404, 'NotFound');
      return structuredClone(found) as T;
    }
    this.writes.push(`${method} ${path}`);
    if (method === 'POST') {
      const at = `${path}/${body.metadata.name}`;
      if (this.objects.has(at)) fail(409, 'AlreadyExists');
      return this.store(at, body) as T;
    }
    if (method === 'PUT') {
      if (this.objects.get(path)?.metadata.resourceVersion !== body.metadata.resourceVersion) fail(409, 'Conflict');
      return this.store(path, body) as T;
    }
    // PATCH: JSON Patch with test and add.
    const object = structuredClone(this.objects.get(path));
    if (!object) return fail(404, 'NotFound');
    for (const op of options.body as { op: string; path: string; value: unknown }[]) {
      const keys = op.path.split('/').slice(1);
      const last = keys.pop()!;
      const parent = keys.reduce<Record<string, unknown>>((at, key) => at[key] as Record<string, unknown>, object);
      if (op.op === 'test' && JSON.stringify(parent[last]) !== JSON.stringify(op.value)) fail(422, 'Invalid');
      if (op.op === 'add') parent[last] = op.value;
    }
    return this.store(path, object) as T;
  }

  store(path: string, object: Stored): Stored {
    const stored = structuredClone({
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(++this.version) },
    });
    this.objects.set(path, stored);
    return stored;
  }
}

const SECRETS = '/api/v1/namespaces/ops/secrets';
const VALIDATING = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hooks';
const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com';

function api(): FakeApi {
  const fake = new FakeApi();
  fake.store(VALIDATING, {
    metadata: { name: 'hooks' },
    webhooks: [
      { name: 'a.example.com', clientConfig: { url: 'https://127.0.0.1:1/a' } },
      { name: 'b.example.com', clientConfig: { url: 'https://127.0.0.1:1/b', caBundle: 'old' } },
    ],
  });
  fake.store(CRD, {
    metadata: { name: 'widgets.example.com' },
    spec: { conversion: { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://127.0.0.1:1/convert' } } } },
  });
  return fake;
}

const replica = (transport: FakeApi) =>
  new SelfManagedCertificates({
    transport,
    namespace: 'ops',
    secretName: 'webhook-server-cert',
    hosts: ['hooks.ops.svc', '127.0.0.1'],
    targets: [
      { kind: 'ValidatingWebhookConfiguration', name: 'hooks' },
      { kind: 'CustomResourceDefinition', name: 'widgets.example.com' },
    ],
  });

describe('SelfManagedCertificates', () => {
  it('gives replicas starting at once one Secret and one CA: the loser of the create reads the winner’s', async () => {
    const fake = api();
    const replicas = [replica(fake), replica(fake), replica(fake)];
    const pairs = await Promise.all(replicas.map((r) => r.obtain()));
    assert.equal(fake.writes.filter((w) => w.startsWith('POST')).length, 3, 'all three tried');
    assert.equal(fake.writes.filter((w) => w.startsWith('PUT')).length, 0);
    assert.equal(new Set(pairs.map((p) => p.cert)).size, 1, 'one serving certificate');
    assert.equal(new Set(replicas.map((r) => r.caBundle)).size, 1, 'one CA');
    const secret = fake.get<{ type: string; data: Record<string, string> }>(`${SECRETS}/webhook-server-cert`);
    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.deepEqual(Object.keys(secret.data).sort(), ['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    const leaf = new X509Certificate(pairs[0]!.cert);
    assert.equal(leaf.subjectAltName, 'DNS:hooks.ops.svc, IP Address:127.0.0.1');
  });

  it('patches only the caBundles that differ, once, and is ready after', async () => {
    const fake = api();
    const [first, second] = [replica(fake), replica(fake)];
    await first.obtain();
    assert.equal(first.ready, false);
    assert.match(first.detail!, /waiting to put the webhook CA into ValidatingWebhookConfiguration hooks/);
    await first.inject();
    assert.equal(first.ready, true);
    const configuration = fake.get<{ webhooks: { clientConfig: { caBundle: string } }[] }>(VALIDATING);
    assert.deepEqual(
      configuration.webhooks.map((w) => w.clientConfig.caBundle),
      [first.caBundle, first.caBundle],
    );
    const crd = fake.get<{ spec: { conversion: { webhook: { clientConfig: { caBundle: string } } } } }>(CRD);
    assert.equal(crd.spec.conversion.webhook.clientConfig.caBundle, first.caBundle);
    assert.equal(
      Buffer.from(first.caBundle, 'base64').toString(),
      new X509Certificate(Buffer.from(first.caBundle, 'base64')).toString(),
    );

    const writes = fake.writes.length;
    await second.obtain();
    await second.inject();
    assert.equal(fake.writes.length, writes, 'a second replica writes nothing: no flapping caBundle');
    assert.equal(second.ready, true);
  });

  it('leaves a CRD that converts without a webhook alone', async () => {
    const fake = api();
    fake.store(CRD, { metadata: { name: 'widgets.example.com' }, spec: { conversion: { strategy: 'None' } } });
    const certificates = replica(fake);
    await certificates.obtain();
    await certificates.inject();
    assert.deepEqual(fake.get<{ spec: unknown }>(CRD).spec, { conversion: { strategy: 'None' } });
  });

  it('says what to apply when a configuration is missing, and what to grant on a 403', async () => {
    const fake = api();
    fake.objects.delete(VALIDATING);
    const certificates = replica(fake);
    await certificates.obtain();
    await assert.rejects(
      certificates.inject(),
      /ValidatingWebhookConfiguration hooks does not exist: apply the manifests/,
    );
    assert.equal(certificates.ready, false);
    assert.match(certificates.detail!, /does not exist/);

    const forbidden: FakeApi = Object.assign(api(), {
      json: (method: string, path: string) => Promise.reject(new KubeApiError(403, 'Forbidden', 'nope', method, path)),
    });
    await assert.rejects(
      replica(forbidden).obtain(),
      /grant get and update on secrets with resourceNames \[webhook-server-cert\], and create on secrets, in ops/,
    );
  });
});
