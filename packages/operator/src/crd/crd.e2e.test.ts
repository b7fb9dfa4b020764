// The CRDs the generator writes, against a real API server: accepted, Established, and
// enforcing what the decorators say (types, ranges, enums, patterns, CEL rules, defaults).
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { request, type RequestOptions } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import type { V1ObjectMeta } from '../client/kinds.js';
import { Test } from '@nestjs/testing';
import { KubeApiError } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { Controller, KubeClient, OperatorModule, Reconcile } from '../index.js';
import { CustomResource } from './custom-resource.decorator.js';
import { customResourceDefinitions, type GeneratedCustomResourceDefinition } from './crd-generator.js';
import { Field } from './field.decorator.js';

/** Tests run many operators at once: no metrics or probe servers on fixed ports. */
const NO_HTTP = { metrics: { port: 0 }, health: { port: 0 } };

const GROUP = 'crdtest.nestor.dev';

enum Engine {
  Memcached = 'memcached',
  Redis = 'redis',
}

class CachePort {
  @Field({ pattern: '^[a-z][a-z0-9-]*$', maxLength: 15 }) name!: string;
  @Field({ type: 'integer', minimum: 1, maximum: 65535 }) port!: number;
  @Field({ enum: ['TCP', 'UDP'], default: 'TCP' }) protocol?: string;
}

class Limits {
  @Field({ intOrString: true, required: false }) memory?: number | string;
  @Field({ type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, default: 0.5 }) evictionRatio?: number;
}

class CacheSpec {
  @Field({ type: 'integer', minimum: 1, maximum: 10, description: 'number of pods' }) size!: number;
  @Field({ type: 'integer', minimum: 1024, maximum: 65535, default: 11211 }) containerPort?: number;
  @Field({ pattern: '^[a-z0-9./-]+(:[A-Za-z0-9._-]+)?$', maxLength: 200 }) image!: string;
  @Field({ enum: Engine, default: Engine.Memcached }) engine?: Engine;
  @Field(() => [CachePort], { listType: 'map', listMapKeys: ['name', 'protocol'], maxItems: 8, required: false })
  ports?: CachePort[];
  @Field({ type: 'object', mapValues: { type: 'string', maxLength: 63 }, maxProperties: 16, required: false })
  annotations?: Record<string, string>;
  @Field({ type: 'object', mapValues: { type: 'integer', minimum: 0, maximum: 100 }, required: false })
  weights?: Record<string, number>;
  @Field({ intOrString: true, default: '25%' }) maxUnavailable?: number | string;
  @Field(() => ['string'], { uniqueItems: true, maxItems: 10, items: { minLength: 2, maxLength: 32 }, required: false })
  tags?: string[];
  @Field(() => Limits, { default: {} }) limits?: Limits;
  @Field({ type: 'object', preserveUnknownFields: true, required: false }) extra?: Record<string, unknown>;
  @Field({ format: 'date-time', required: false }) since?: string;
  @Field({
    type: 'integer',
    required: false,
    rules: [{ rule: 'self % 2 == 0', message: 'shards must be an even number', reason: 'FieldValueInvalid' }],
  })
  shards?: number;
}

class Condition {
  @Field() type!: string;
  @Field({ enum: ['True', 'False', 'Unknown'] }) status!: string;
  @Field({ required: false, maxLength: 1024 }) message?: string;
  @Field({ format: 'date-time', required: false }) lastTransitionTime?: string;
}

class CacheStatus {
  @Field({ type: 'integer', required: false }) readyReplicas?: number;
  @Field({ type: 'integer', required: false }) observedGeneration?: number;
  @Field(() => [Condition], { listType: 'map', listMapKeys: ['type'], maxItems: 16, required: false })
  conditions?: Condition[];
}

@CustomResource({
  group: GROUP,
  version: 'v1',
  kind: 'Cache',
  storage: true,
  shortNames: ['cch'],
  categories: ['crdtest'],
  subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.readyReplicas' } },
  printerColumns: [
    { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
    { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', priority: 1 },
  ],
})
class Cache {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  @Field(() => CacheSpec, {
    rules: [{ rule: 'self.size <= 3 || self.engine == "redis"', message: 'more than 3 pods needs the redis engine' }],
  })
  spec!: CacheSpec;
  @Field(() => CacheStatus, { required: false }) status?: CacheStatus;
}

class CacheSpecV1beta1 {
  @Field({ type: 'integer', minimum: 1, maximum: 5 }) size!: number;
  @Field({ required: false }) image?: string;
}

@CustomResource({
  group: GROUP,
  version: 'v1beta1',
  kind: 'Cache',
  deprecated: 'crdtest.nestor.dev/v1beta1 Cache is deprecated; use v1',
})
class CacheV1beta1 {
  @Field(() => CacheSpecV1beta1) spec!: CacheSpecV1beta1;
}

/** A cluster-scoped kind with a root-level default and a nullable, enum field. */
@CustomResource({ group: GROUP, version: 'v1alpha1', kind: 'Policy', scope: 'Cluster' })
class Policy {
  @Field({ enum: ['Allow', 'Deny'], default: 'Deny' }) action?: string;
  @Field({ type: 'object', embeddedResource: true, required: false }) template?: object;
  @Field({ type: 'string', nullable: true }) note?: string | null;
}

// Kinds for installCustomResources, in a group of their own per run, so their CRDs are
// certainly not installed before the module starts.
const INSTALL_GROUP = `crdinstall-${randomBytes(4).toString('hex')}.nestor.dev`;

class GreetingSpec {
  @Field({ minLength: 1 }) name!: string;
  @Field({ enum: ['hello', 'hi'], default: 'hello' }) word?: string;
}

@CustomResource({ group: INSTALL_GROUP, version: 'v1', kind: 'Greeting', subresources: { status: {} } })
class Greeting {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  @Field(() => GreetingSpec) spec!: GreetingSpec;
  @Field({ type: 'object', preserveUnknownFields: true, required: false }) status?: { message?: string };
}

@CustomResource({ group: INSTALL_GROUP, version: 'v1', kind: 'Extra', scope: 'Cluster' })
class Extra {
  @Field({ required: false }) note?: string;
}

// Same kind as Greeting in the same group, under another plural: the API server refuses its names.
@CustomResource({ group: INSTALL_GROUP, version: 'v1', kind: 'Greeting', plural: 'salutations' })
class Salutation {
  @Field({ required: false }) note?: string;
}

@Controller(Greeting)
class GreetingController {
  constructor(private readonly kube: KubeClient) {}

  @Reconcile()
  async reconcile(greeting: Greeting): Promise<void> {
    await this.kube.patchStatus(greeting, { message: `${greeting.spec.word} ${greeting.spec.name}` });
  }
}

let env: TestEnvironment;
let crds: GeneratedCustomResourceDefinition[];

before(async () => {
  env = await TestEnvironment.start();
  crds = customResourceDefinitions([Cache, CacheV1beta1, Policy]);
  await env.installCRDs(crds);
});
after(async () => {
  for (const plural of ['greetings', 'extras', 'salutations']) {
    await env.client.raw(
      'DELETE',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.${INSTALL_GROUP}`,
    );
  }
  await env?.stop();
});

const caches = (ns: string, version = 'v1', name = '') =>
  `/apis/${GROUP}/${version}/namespaces/${ns}/caches${name ? `/${name}` : ''}`;

function cache(name: string, spec: Record<string, unknown>, version = 'v1') {
  return { apiVersion: `${GROUP}/${version}`, kind: 'Cache', metadata: { name }, spec };
}

const valid = { size: 2, image: 'memcached:1.6' };

/** Creates the object and expects a 422 whose message matches every pattern. */
async function rejected(path: string, body: unknown, ...patterns: RegExp[]): Promise<string> {
  const error = await env.client.request('POST', path, body).then(
    () => assert.fail(`the API server accepted ${JSON.stringify(body)}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof KubeApiError, String(error));
  const { detail: message, reason } = error;
  assert.equal(error.status, 422, message);
  assert.equal(reason, 'Invalid');
  for (const pattern of patterns) assert.match(message, pattern);
  return message;
}

describe('generated CRDs on a real API server', () => {
  it('are accepted and Established, with the names, versions and subresources declared', async () => {
    assert.deepEqual(crds.map((c) => c.metadata.name).sort(), [`caches.${GROUP}`, `policies.${GROUP}`]);
    for (const crd of crds) {
      const stored = await env.client.request<{
        spec: {
          versions: Array<{ name: string; storage: boolean; deprecated?: boolean }>;
          names: { shortNames?: string[] };
        };
        status: { conditions: Array<{ type: string; status: string }>; storedVersions: string[] };
      }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
      const conditions = Object.fromEntries(stored.status.conditions.map((c) => [c.type, c.status]));
      assert.equal(conditions.Established, 'True', crd.metadata.name);
      assert.equal(conditions.NamesAccepted, 'True', crd.metadata.name);
      assert.equal(conditions.NonStructuralSchema, undefined, `${crd.metadata.name} is structural`);
    }
    const cacheCrd = crds.find((c) => c.spec.names.kind === 'Cache')!;
    assert.deepEqual(
      cacheCrd.spec.versions.map((v) => [v.name, v.storage, v.deprecated ?? false]),
      [
        ['v1', true, false],
        ['v1beta1', false, true],
      ],
    );
    const discovery = await env.client.request<{
      resources: Array<{ name: string; shortNames?: string[]; categories?: string[] }>;
    }>('GET', `/apis/${GROUP}/v1`);
    const names = discovery.resources.map((r) => r.name).sort();
    assert.deepEqual(names, ['caches', 'caches/scale', 'caches/status']);
    assert.deepEqual(discovery.resources.find((r) => r.name === 'caches')?.shortNames, ['cch']);
    assert.deepEqual(discovery.resources.find((r) => r.name === 'caches')?.categories, ['crdtest']);
  });

  it('stores a valid object and applies the defaults, nested ones included', async () => {
    const ns = await env.createNamespace('crd-valid');
    const created = await env.client.request<Cache>(
      'POST',
      caches(ns),
      cache('full', {
        ...valid,
        ports: [
          { name: 'memcache', port: 11211 },
          { name: 'memcache', port: 11212, protocol: 'UDP' },
        ],
        annotations: { team: 'cache' },
        weights: { a: 0, b: 100 },
        tags: ['hot', 'eu'],
        limits: { memory: '64Mi' },
        extra: { anything: { goes: [1, 'two'] } },
        since: '2024-01-02T03:04:05Z',
        shards: 4,
      }),
    );
    const spec = created.spec as CacheSpec;
    assert.equal(spec.containerPort, 11211, 'default of a scalar');
    assert.equal(spec.engine, 'memcached', 'default from a TypeScript enum');
    assert.equal(spec.maxUnavailable, '25%', 'default of an int-or-string');
    assert.deepEqual(
      spec.ports?.map((p) => [p.name, p.protocol]),
      [
        ['memcache', 'TCP'],
        ['memcache', 'UDP'],
      ],
      'default inside list-map items (a map key with a default)',
    );
    assert.deepEqual(spec.limits, { memory: '64Mi', evictionRatio: 0.5 }, 'default inside a nested object');
    assert.deepEqual(spec.extra, { anything: { goes: [1, 'two'] } }, 'unknown fields kept where preserved');

    const minimal = await env.client.request<Cache>(
      'POST',
      caches(ns),
      cache('minimal', { size: 1, image: 'memcached', bogus: 1 }),
    );
    assert.deepEqual(
      (minimal.spec as CacheSpec).limits,
      { evictionRatio: 0.5 },
      'an object default, then its fields defaulted',
    );
    assert.ok(!('bogus' in minimal.spec), 'unknown fields are pruned');

    // Read back as stored.
    const read = await env.client.request<Cache>('GET', caches(ns, 'v1', 'minimal'));
    assert.equal(read.spec.containerPort, 11211);

    const policy = await env.client.request<Policy & { metadata: V1ObjectMeta }>(
      'POST',
      `/apis/${GROUP}/v1alpha1/policies`,
      {
        apiVersion: `${GROUP}/v1alpha1`,
        kind: 'Policy',
        metadata: { name: `policy-${ns}` },
        note: null,
        template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: 'b' } },
      },
    );
    assert.equal(policy.action, 'Deny', 'a root-level default');
    assert.equal(policy.note, null, 'a nullable field keeps null');
    assert.deepEqual((policy.template as { data: unknown }).data, { a: 'b' }, 'an embedded resource is kept whole');
    await env.client.request('DELETE', `/apis/${GROUP}/v1alpha1/policies/policy-${ns}`);
  });

  it('rejects a value of the wrong type', async () => {
    const ns = await env.createNamespace('crd-type');
    await rejected(caches(ns), cache('t1', { ...valid, size: 'three' }), /spec\.size/, /must be of type integer/);
    await rejected(caches(ns), cache('t2', { ...valid, size: 1.5 }), /spec\.size/, /must be of type integer/);
    await rejected(
      caches(ns),
      cache('t3', { ...valid, weights: { a: 'x' } }),
      /spec\.weights\.a/,
      /must be of type integer/,
    );
    await rejected(caches(ns), cache('t4', { ...valid, maxUnavailable: true }), /spec\.maxUnavailable/);
  });

  it('rejects values out of range', async () => {
    const ns = await env.createNamespace('crd-range');
    await rejected(caches(ns), cache('r1', { ...valid, size: 11 }), /spec\.size/, /less than or equal to 10/);
    await rejected(caches(ns), cache('r2', { ...valid, size: 0 }), /spec\.size/, /greater than or equal to 1/);
    await rejected(
      caches(ns),
      cache('r3', { ...valid, containerPort: 80 }),
      /spec\.containerPort/,
      /greater than or equal to 1024/,
    );
    await rejected(
      caches(ns),
      cache('r4', { ...valid, limits: { evictionRatio: 0 } }),
      /spec\.limits\.evictionRatio/,
      /greater than 0/,
    );
    await rejected(
      caches(ns),
      cache('r5', { ...valid, weights: { a: 101 } }),
      /spec\.weights\.a/,
      /less than or equal to 100/,
    );
    await rejected(
      caches(ns),
      cache('r6', { ...valid, ports: [{ name: 'p', port: 70000 }] }),
      /spec\.ports\[0\]\.port/,
      /less than or equal to 65535/,
    );
    await rejected(caches(ns), cache('r7', { ...valid, tags: ['x'] }), /spec\.tags\[0\]/, /at least 2 chars long/);
  });

  it('rejects an object that fails a CEL rule, with the message written in the rule', async () => {
    const ns = await env.createNamespace('crd-cel');
    await rejected(
      caches(ns),
      cache('c1', { ...valid, size: 5 }),
      /spec: Invalid value/,
      /more than 3 pods needs the redis engine/,
    );
    await env.client.request('POST', caches(ns), cache('c2', { ...valid, size: 5, engine: 'redis' }));
    await rejected(caches(ns), cache('c3', { ...valid, shards: 3 }), /spec\.shards/, /shards must be an even number/);
  });

  it('rejects an object missing a required field', async () => {
    const ns = await env.createNamespace('crd-required');
    await rejected(caches(ns), cache('m1', { size: 1 }), /spec\.image: Required value/);
    await rejected(
      caches(ns),
      { apiVersion: `${GROUP}/v1`, kind: 'Cache', metadata: { name: 'm2' } },
      /spec: Required value/,
    );
    await rejected(
      caches(ns),
      cache('m3', { ...valid, ports: [{ name: 'p' }] }),
      /spec\.ports\[0\]\.port: Required value/,
    );
  });

  it('rejects a value outside an enum', async () => {
    const ns = await env.createNamespace('crd-enum');
    await rejected(
      caches(ns),
      cache('e1', { ...valid, engine: 'dragonfly' }),
      /spec\.engine: Unsupported value: "dragonfly"/,
      /"memcached", "redis"/,
    );
    await rejected(
      caches(ns),
      cache('e2', { ...valid, ports: [{ name: 'p', port: 1, protocol: 'SCTP' }] }),
      /spec\.ports\[0\]\.protocol: Unsupported value: "SCTP"/,
    );
  });

  it('rejects a value that does not match a pattern', async () => {
    const ns = await env.createNamespace('crd-pattern');
    await rejected(caches(ns), cache('p1', { ...valid, image: 'Not An Image!' }), /spec\.image/, /should match/);
    await rejected(
      caches(ns),
      cache('p2', { ...valid, ports: [{ name: '9lives', port: 1 }] }),
      /spec\.ports\[0\]\.name/,
      /should match '\^\[a-z\]\[a-z0-9-\]\*\$'/,
    );
  });

  it('enforces list-map keys, sets and map sizes', async () => {
    const ns = await env.createNamespace('crd-lists');
    const port = { name: 'a', port: 1 };
    await rejected(caches(ns), cache('l1', { ...valid, ports: [port, port] }), /spec\.ports\[1\]: Duplicate value/);
    await rejected(caches(ns), cache('l2', { ...valid, tags: ['ab', 'ab'] }), /spec\.tags\[1\]: Duplicate value/);
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    await rejected(
      caches(ns),
      cache('l3', { ...valid, annotations: many }),
      /spec\.annotations: Too many: 17/,
      /must have at most 16 items/,
    );
  });

  it('serves both versions of a multi-version kind from one storage version', async () => {
    const ns = await env.createNamespace('crd-versions');
    const created = await env.client.raw(
      'POST',
      caches(ns, 'v1beta1'),
      JSON.stringify(cache('old', { size: 2 }, 'v1beta1')),
    );
    assert.equal(created.status, 201, created.text);
    // The v1beta1 schema has its own constraints.
    await rejected(
      caches(ns, 'v1beta1'),
      cache('old2', { size: 6 }, 'v1beta1'),
      /spec\.size/,
      /less than or equal to 5/,
    );
    // The same object through v1 (conversion None: only apiVersion changes).
    const asV1 = await env.client.request<Cache>('GET', caches(ns, 'v1', 'old'));
    assert.equal(asV1.apiVersion, `${GROUP}/v1`);
    assert.equal(asV1.spec.size, 2);
    const crd = await env.client.request<{ status: { storedVersions: string[] } }>(
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/caches.${GROUP}`,
    );
    assert.deepEqual(crd.status.storedVersions, ['v1']);
  });

  it('serves the status and scale subresources', async () => {
    const ns = await env.createNamespace('crd-status');
    await env.client.request('POST', caches(ns), cache('s', valid));
    // Status writes through the main resource are ignored; through /status they stick.
    const ignored = await env.client.request<Cache>(
      'PATCH',
      caches(ns, 'v1', 's'),
      { status: { readyReplicas: 9 } },
      'application/merge-patch+json',
    );
    assert.equal(ignored.status, undefined);
    const patched = await env.client.request<Cache>(
      'PATCH',
      `${caches(ns, 'v1', 's')}/status`,
      { status: { readyReplicas: 2, conditions: [{ type: 'Ready', status: 'True' }] } },
      'application/merge-patch+json',
    );
    assert.equal(patched.status?.readyReplicas, 2);
    await assert.rejects(
      env.client.request(
        'PATCH',
        `${caches(ns, 'v1', 's')}/status`,
        { status: { conditions: [{ type: 'Ready', status: 'Maybe' }] } },
        'application/merge-patch+json',
      ),
      (e: unknown) =>
        e instanceof KubeApiError &&
        e.status === 422 &&
        /status\.conditions\[0\]\.status: Unsupported value/.test(e.message),
    );
    const scale = await env.client.request<{ spec: { replicas: number }; status: { replicas: number } }>(
      'GET',
      `${caches(ns, 'v1', 's')}/scale`,
    );
    assert.equal(scale.spec.replicas, 2);
    assert.equal(scale.status.replicas, 2);
  });

  it("prints the declared columns (and Age) in kubectl's table view", async () => {
    const ns = await env.createNamespace('crd-columns');
    await env.client.request('POST', caches(ns), cache('tbl', valid));
    const table = await tableOf(caches(ns, 'v1', 'tbl'));
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ['Name', 'Size', 'Engine', 'Ready', 'Age'],
    );
    assert.deepEqual(table.rows[0]!.cells.slice(0, 3), ['tbl', 2, 'memcached']);
  });
});

describe('OperatorModule installCustomResources', () => {
  const crdPath = (plural: string) =>
    `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.${INSTALL_GROUP}`;

  it('installs the CRDs of the kinds its controllers use before it watches them, then reconciles', async () => {
    assert.equal((await env.client.raw('GET', crdPath('greetings'))).status, 404, 'not installed beforehand');
    const namespace = await env.createNamespace('crd-install');
    const moduleRef = await Test.createTestingModule({
      imports: [
        OperatorModule.forRoot({ kubeConfig: env.kubeConfig, namespace, installCustomResources: true, ...NO_HTTP }),
      ],
      providers: [GreetingController],
    }).compile();
    await moduleRef.init();
    try {
      const crd = await env.client.request<{
        status: { conditions: Array<{ type: string; status: string }> };
        metadata: { managedFields: Array<{ manager: string; operation: string }> };
      }>('GET', crdPath('greetings'));
      assert.ok(crd.status.conditions.some((c) => c.type === 'Established' && c.status === 'True'));
      assert.ok(
        crd.metadata.managedFields.some((f) => f.manager === 'nestor' && f.operation === 'Apply'),
        "server-side applied with the operator's field manager",
      );
      assert.equal((await env.client.raw('GET', crdPath('extras'))).status, 404, 'only the kinds the controllers use');

      const path = `/apis/${INSTALL_GROUP}/v1/namespaces/${namespace}/greetings`;
      await env.client.request('POST', path, {
        apiVersion: `${INSTALL_GROUP}/v1`,
        kind: 'Greeting',
        metadata: { name: 'world' },
        spec: { name: 'world' },
      });
      const reconciled = await waitFor(
        async () => (await env.client.request<Greeting>('GET', `${path}/world`)).status?.message,
        { what: 'the Greeting to be reconciled' },
      );
      assert.equal(reconciled, 'hello world', 'reconciled, with the default the generated schema applies');
    } finally {
      await moduleRef.close();
    }
  });

  it('installs the CRDs of the classes it is given, with no controller, and again harmlessly', async () => {
    for (let run = 0; run < 2; run++) {
      const moduleRef = await Test.createTestingModule({
        imports: [OperatorModule.forRoot({ kubeConfig: env.kubeConfig, installCustomResources: [Extra], ...NO_HTTP })],
      }).compile();
      await moduleRef.init();
      await moduleRef.close();
    }
    const discovery = await env.client.request<{ resources: Array<{ name: string; namespaced: boolean }> }>(
      'GET',
      `/apis/${INSTALL_GROUP}/v1`,
    );
    assert.equal(discovery.resources.find((r) => r.name === 'extras')?.namespaced, false);
  });

  it("fails start-up at once, with the API server's reason, when a CRD's names are refused", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        OperatorModule.forRoot({ kubeConfig: env.kubeConfig, installCustomResources: [Salutation], ...NO_HTTP }),
      ],
    }).compile();
    await assert.rejects(
      moduleRef.init(),
      new RegExp(`salutations\\.${INSTALL_GROUP.replace(/\./g, '\\.')} was not accepted: .*Greeting.*already in use`),
    );
    await moduleRef.close();
  });
});

/** GET as a meta.k8s.io Table, as kubectl get does. */
async function tableOf(
  path: string,
): Promise<{ columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> }> {
  const { status, text } = await rawWithAccept(path, 'application/json;as=Table;v=v1;g=meta.k8s.io');
  assert.equal(status, 200, text);
  return JSON.parse(text) as { columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> };
}

async function rawWithAccept(path: string, accept: string): Promise<{ status: number; text: string }> {
  const options: RequestOptions = {};
  await env.kubeConfig.applyToHTTPSOptions(options);
  const url = new URL(path, env.server);
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, method: 'GET', headers: { ...options.headers, accept } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
