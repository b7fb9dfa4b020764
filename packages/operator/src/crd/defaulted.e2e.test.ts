// What `Defaulted<T>` and `@Field({ quantity: true })` promise, against a real API server:
// the API server fills a defaulted field in every object it returns, also one stored before
// the default existed, and takes exactly the quantities apimachinery reads.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { KubeApiError, type ObjectMeta } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { customResourceDefinition } from './crd-generator.js';
import { CustomResource } from './custom-resource.decorator.js';
import type { AsWritten, Defaulted } from './defaulted.js';
import { Field } from './field.decorator.js';
import { compareQuantities, type Quantity } from './quantity.js';

// A group of its own per run: the test changes the CRD's schema.
const GROUP = `defaulted-${randomBytes(4).toString('hex')}.nestor.dev`;

class BucketSpec {
  @Field({ minLength: 1 }) owner!: string;
  @Field({ quantity: true, default: '1Gi' }) size!: Defaulted<Quantity>;
  @Field({ enum: ['Retain', 'Delete'], default: 'Retain' }) reclaimPolicy!: Defaulted<'Retain' | 'Delete'>;
  @Field({ type: 'integer', minimum: 0, default: 2 }) copies!: Defaulted<number>;
}

@CustomResource({ group: GROUP, version: 'v1', kind: 'Bucket' })
class Bucket {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;
  @Field(() => BucketSpec) spec!: BucketSpec;
}

const crd = customResourceDefinition(Bucket);

/** The same CRD before the defaulted fields were added: only `owner`. */
function withoutDefaults(): typeof crd {
  const older = structuredClone(crd);
  const spec = older.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
  spec.properties = { owner: spec.properties!.owner! };
  return older;
}

let env: TestEnvironment;
let ns: string;

before(async () => {
  env = await TestEnvironment.start();
  ns = await env.createNamespace('defaulted');
});
after(async () => {
  await env?.client.raw('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
  await env?.stop();
});

const buckets = (name = '') => `/apis/${GROUP}/v1/namespaces/${ns}/buckets${name ? `/${name}` : ''}`;
const create = (name: string, spec: AsWritten<BucketSpec>) =>
  env.client.request<Bucket>('POST', buckets(), {
    apiVersion: `${GROUP}/v1`,
    kind: 'Bucket',
    metadata: { name },
    spec,
  });

describe('Defaulted fields on a real API server', () => {
  it('are filled in objects stored before the default existed, when the API server reads them', async () => {
    await env.installCRDs([withoutDefaults()]);
    await create('old', { owner: 'team-a' });

    await env.installCRDs([crd]);
    const read = await waitFor(
      async () => {
        const bucket = await env.client.request<Bucket>('GET', buckets('old'));
        return bucket.spec.size !== undefined && bucket;
      },
      { timeoutMs: 30_000, what: 'the API server to serve the new schema' },
    );
    assert.deepEqual(read.spec, { owner: 'team-a', size: '1Gi', reclaimPolicy: 'Retain', copies: 2 });
    // LIST and WATCH, what an informer and so a reconciler receives, read the same way.
    const list = await env.client.request<{ items: Bucket[] }>('GET', buckets());
    assert.deepEqual(list.items.find((b) => b.metadata.name === 'old')?.spec.copies, 2);
  });

  it('are filled in an object written without them, and kept when written', async () => {
    const bucket = await create('new', { owner: 'team-b', copies: 0 });
    assert.deepEqual(bucket.spec, { owner: 'team-b', size: '1Gi', reclaimPolicy: 'Retain', copies: 0 });
  });
});

describe('@Field({ quantity: true }) on a real API server', () => {
  it('takes strings with a suffix, and integers, as written', async () => {
    const sizes: Quantity[] = ['1.5Gi', '512Mi', '2e3', '100m', 4096];
    for (const [i, size] of sizes.entries()) {
      const bucket = await create(`size-${i}`, { owner: 'team-c', size });
      assert.equal(bucket.spec.size, size, 'stored as written: custom resources do not canonicalize');
    }
    const stored = (await env.client.request<{ items: Bucket[] }>('GET', buckets())).items
      .filter((b) => b.metadata.name!.startsWith('size-'))
      .map((b) => b.spec.size)
      .sort(compareQuantities);
    assert.deepEqual(stored, ['100m', '2e3', 4096, '512Mi', '1.5Gi']);
  });

  it('refuses what is not a quantity, naming the field', async () => {
    for (const size of ['1GB', '1 Gi', 'big', '-']) {
      const error = await create('bad', { owner: 'team-d', size }).then(
        () => assert.fail(`the API server accepted size ${size}`),
        (e: unknown) => e,
      );
      assert.ok(error instanceof KubeApiError, String(error));
      assert.equal(error.status, 422);
      assert.match(error.detail, /spec\.size/);
    }
  });
});
