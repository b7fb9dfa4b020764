// Conversion webhooks against the real API server: a kind with a hub (v2) and a spoke (v1)
// that lacks a field, converted by a @Conversion class the app serves at /convert (the CRD
// pointed at it with webhookConversion({ url, caBundle }), as for an operator run on this
// machine; TestEnvironment.installWebhooks gives the serving certificate). Objects are read, written and listed
// at the version they are not stored at, with the storage version first the hub and then
// the spoke; round trips through the spoke lose nothing; bad input gets 400; a converter
// that throws fails the request with its message. The group is this run's own: CRDs are
// cluster-wide and the control plane is shared.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { KubeApiError } from '@nestor/core';
import { parallel, TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import {
  Conversion,
  CONVERSION_DATA_ANNOTATION,
  ConvertFromHub,
  ConvertToHub,
  CustomResource,
  customResourceDefinition,
  Field,
  type ObjectMeta,
  webhookConversion,
} from '../index.js';
import { bootOperatorApp } from '../test-support/operator-app.js';
import { requestOnce, type OnceAnswer } from '../test-support/request-once.js';

const GROUP = `conv${randomBytes(3).toString('hex')}.nestor.dev`;
const CRD = `gizmos.${GROUP}`;

class GizmoSpecV2 {
  @Field({ type: 'integer', minimum: 0 }) replicas!: number;
  @Field({ required: false }) tier?: string;
}

/** The hub: replicas may be 0, and it has a tier. */
@CustomResource({ group: GROUP, version: 'v2', kind: 'Gizmo', storage: true })
class GizmoV2 {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;
  @Field(() => GizmoSpecV2) spec!: GizmoSpecV2;
}

class GizmoSpecV1 {
  @Field({ type: 'integer', minimum: 1 }) size!: number;
}

/** The spoke: size (at least 1), no tier. */
@CustomResource({ group: GROUP, version: 'v1', kind: 'Gizmo', storage: false })
class GizmoV1 {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;
  @Field(() => GizmoSpecV1) spec!: GizmoSpecV1;
}

/** An injected service: what the converter saw, for the assertions. */
@Injectable()
class Tally {
  readonly seen: Array<{ name: string; to: 'v1' | 'v2' }> = [];
}

@Conversion(GizmoV2)
class GizmoConversion {
  constructor(private readonly tally: Tally) {}

  @ConvertToHub(GizmoV1)
  toHub(spoke: GizmoV1): Partial<GizmoV2> {
    this.tally.seen.push({ name: spoke.metadata.name!, to: 'v2' });
    return { spec: { replicas: spoke.spec.size } };
  }

  @ConvertFromHub(GizmoV1)
  fromHub(hub: GizmoV2): Partial<GizmoV1> {
    this.tally.seen.push({ name: hub.metadata.name!, to: 'v1' });
    if (hub.spec.replicas === 13) throw new Error('13 replicas is unlucky');
    return { spec: { size: Math.max(1, hub.spec.replicas) } };
  }
}

let env: TestEnvironment;
let webhooks: LocalWebhooks;
let app: INestApplicationContext | undefined;
let ns: string;

const path = (version: string, name = '') =>
  `/apis/${GROUP}/${version}/namespaces/${ns}/gizmos${name ? `/${name}` : ''}`;
const hub = (name: string, spec: GizmoSpecV2) => ({
  apiVersion: `${GROUP}/v2`,
  kind: 'Gizmo',
  metadata: { name },
  spec,
});
const spoke = (name: string, spec: GizmoSpecV1) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Gizmo',
  metadata: { name },
  spec,
});
const get = <T>(version: 'v1' | 'v2', name: string) => env.client.request<T>('GET', path(version, name));

/** A request straight to the webhook server, trusting the installed CA. */
function direct(body: string): Promise<OnceAnswer> {
  return requestOnce({ host: webhooks.host, port: webhooks.port, path: '/convert', body, ca: webhooks.caCertificate });
}

before(async () => {
  env = await TestEnvironment.start();
  ns = await env.createNamespace('conversion');
  webhooks = await env.installWebhooks({}); // the serving certificate and its CA
  const crd = customResourceDefinition(GizmoV2, GizmoV1);
  const conversion = webhookConversion({
    url: `https://${webhooks.host}:${webhooks.port}`,
    caBundle: webhooks.caCertificate,
  });
  await env.installCRDs([{ ...crd, spec: { ...crd.spec, conversion } }]);
  app = await bootOperatorApp({
    kubeConfig: env.kubeConfig,
    namespace: ns,
    providers: [Tally, GizmoConversion],
    webhooks: { host: webhooks.host, port: webhooks.port, certDir: webhooks.certDir },
  });
  // The API server picks up the CRD's new conversion asynchronously: wait until a read
  // through the spoke is converted (with None it would only change the apiVersion).
  await env.client.request('POST', path('v2'), hub('probe', { replicas: 2 }));
  await waitFor(async () => (await get<GizmoV1>('v1', 'probe').catch(() => undefined))?.spec.size === 2, {
    timeoutMs: 30_000,
    what: 'the API server to convert through the webhook',
  });
});

after(async () => {
  // Conversion back to None before the server goes: the garbage collector and the CRD's
  // deletion read the kind at other versions (a CRD whose webhook is down stalls deleting).
  const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`;
  await env?.client
    .request('PATCH', crdPath, { spec: { conversion: { strategy: 'None', webhook: null } } })
    .catch(() => {});
  await webhooks?.uninstall();
  await env?.client.request('DELETE', crdPath).catch(() => {});
  await app?.close();
  await env?.stop();
});

describe('conversion webhooks served to the API server', () => {
  it('reads an object stored as the hub through the spoke, and a write through the spoke keeps what only the hub has', async () => {
    await env.client.request('POST', path('v2'), hub('kept', { replicas: 3, tier: 'gold' }));
    const asSpoke = await get<GizmoV1>('v1', 'kept');
    assert.equal(asSpoke.apiVersion, `${GROUP}/v1`);
    assert.deepEqual(asSpoke.spec, { size: 3 });
    assert.deepEqual(JSON.parse(asSpoke.metadata.annotations![CONVERSION_DATA_ANNOTATION]!), {
      spec: { tier: 'gold' },
    });
    // Written back as read, with a new size: the tier survives (pruning would drop it otherwise).
    await env.client.request('PUT', path('v1', 'kept'), { ...asSpoke, spec: { size: 4 } });
    const asHub = await get<GizmoV2>('v2', 'kept');
    assert.deepEqual(asHub.spec, { replicas: 4, tier: 'gold' });
    assert.equal(asHub.metadata.annotations?.[CONVERSION_DATA_ANNOTATION], undefined, 'the hub carries no annotation');
    assert.equal(asHub.metadata.uid, asSpoke.metadata.uid);
  });

  it('round-trips a value the spoke cannot hold (replicas 0) unless the spoke changes it', async () => {
    await env.client.request('POST', path('v2'), hub('zero', { replicas: 0, tier: 'bronze' }));
    const asSpoke = await get<GizmoV1>('v1', 'zero');
    assert.deepEqual(asSpoke.spec, { size: 1 });
    // A label change through the spoke: the hub keeps replicas 0.
    await env.client.request('PUT', path('v1', 'zero'), {
      ...asSpoke,
      metadata: { ...asSpoke.metadata, labels: { touched: 'yes' } },
    });
    const kept = await get<GizmoV2>('v2', 'zero');
    assert.deepEqual(kept.spec, { replicas: 0, tier: 'bronze' });
    assert.equal(kept.metadata.labels?.touched, 'yes');
    // A size change through the spoke wins; the tier stays.
    const again = await get<GizmoV1>('v1', 'zero');
    await env.client.request('PUT', path('v1', 'zero'), { ...again, spec: { size: 5 } });
    assert.deepEqual((await get<GizmoV2>('v2', 'zero')).spec, { replicas: 5, tier: 'bronze' });
  });

  it('creates through the spoke, stored as the hub', async () => {
    const created = await env.client.request<GizmoV1>('POST', path('v1'), spoke('made-as-v1', { size: 2 }));
    assert.deepEqual(created.spec, { size: 2 });
    assert.deepEqual((await get<GizmoV2>('v2', 'made-as-v1')).spec, { replicas: 2 });
  });

  it('with the spoke as storage version: writes through the hub are stored as the spoke and read back whole', async () => {
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`;
    const crd = await env.client.request<{ spec: { versions: Array<{ name: string }> } }>('GET', crdPath);
    const index = (name: string) => crd.spec.versions.findIndex((v) => v.name === name);
    await env.client.request(
      'PATCH',
      crdPath,
      [
        { op: 'replace', path: `/spec/versions/${index('v2')}/storage`, value: false },
        { op: 'replace', path: `/spec/versions/${index('v1')}/storage`, value: true },
      ],
      'application/json-patch+json',
    );
    // Once the API server stores v1, a create through v2 is converted to v1 on its way in.
    const tally = app!.get(Tally);
    let probe = 0;
    await waitFor(
      async () => {
        const name = `storage-probe-${probe++}`;
        await env.client.request('POST', `${path('v2')}?dryRun=All`, hub(name, { replicas: 1 }));
        return tally.seen.some((s) => s.name === name && s.to === 'v1');
      },
      { timeoutMs: 30_000, what: 'the API server to store Gizmos as v1' },
    );
    await env.client.request('POST', path('v2'), hub('stored-as-v1', { replicas: 6, tier: 'silver' }));
    assert.deepEqual((await get<GizmoV2>('v2', 'stored-as-v1')).spec, { replicas: 6, tier: 'silver' });
    const asSpoke = await get<GizmoV1>('v1', 'stored-as-v1');
    assert.deepEqual(asSpoke.spec, { size: 6 });
    assert.ok(asSpoke.metadata.annotations?.[CONVERSION_DATA_ANNOTATION], 'stored with the hub’s data');
    // An update through the hub, stored as the spoke again.
    await env.client.request(
      'PATCH',
      path('v2', 'stored-as-v1'),
      { spec: { tier: 'platinum' } },
      'application/merge-patch+json',
    );
    assert.deepEqual((await get<GizmoV2>('v2', 'stored-as-v1')).spec, { replicas: 6, tier: 'platinum' });
    // Objects stored as v2 before the change still read both ways.
    assert.deepEqual((await get<GizmoV2>('v2', 'kept')).spec, { replicas: 4, tier: 'gold' });
    assert.deepEqual((await get<GizmoV1>('v1', 'kept')).spec, { size: 4 });
    const stored = await env.client.request<{ status: { storedVersions: string[] } }>('GET', crdPath);
    assert.deepEqual([...stored.status.storedVersions].sort(), ['v1', 'v2']);
  });

  it('lists many objects, stored at both versions, in either version', async () => {
    const names = Array.from({ length: 60 }, (_, i) => `many-${i}`);
    await parallel(names, 8, (name, i) =>
      i % 2
        ? env.client.request('POST', path('v2'), hub(name, { replicas: 20 + i, tier: `t${i}` }))
        : env.client.request('POST', path('v1'), spoke(name, { size: 20 + i })),
    );
    const asHub = await env.client.request<{ items: GizmoV2[] }>('GET', path('v2'));
    const hubs = new Map(asHub.items.map((item) => [item.metadata.name!, item]));
    const asSpoke = await env.client.request<{ items: GizmoV1[] }>('GET', path('v1'));
    const spokes = new Map(asSpoke.items.map((item) => [item.metadata.name!, item]));
    names.forEach((name, i) => {
      const replicas = 20 + i; // never 13, which the converter refuses
      assert.equal(hubs.get(name)?.apiVersion, `${GROUP}/v2`);
      assert.deepEqual(hubs.get(name)?.spec, { replicas, ...(i % 2 ? { tier: `t${i}` } : {}) }, name);
      assert.equal(spokes.get(name)?.apiVersion, `${GROUP}/v1`);
      assert.deepEqual(spokes.get(name)?.spec, { size: replicas }, name);
    });
    // Older objects, stored as v2, are in the same lists.
    assert.equal(spokes.get('kept')?.spec.size, 4);
  });

  it('answers a malformed ConversionReview with 400 and the reason, and keeps serving', async () => {
    const notJson = await direct('{"kind":');
    assert.equal(notJson.status, 400);
    assert.match(notJson.text, /the body is not JSON/);
    const wrong = await direct(JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }));
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /the ConversionReview has no request/);
    const noObjects = await direct(
      JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'u', desiredAPIVersion: `${GROUP}/v1` },
      }),
    );
    assert.equal(noObjects.status, 400);
    assert.match(noObjects.text, /request.objects is not a list/);
    assert.deepEqual((await get<GizmoV2>('v2', 'kept')).spec, { replicas: 4, tier: 'gold' }, 'still serving');
  });

  it('fails the request with the converter’s message when it throws', async () => {
    // Stored as v1 now: the create through v2 needs fromHub, which refuses 13.
    let error: unknown;
    try {
      await env.client.request('POST', path('v2'), hub('unlucky', { replicas: 13 }));
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof KubeApiError, `the create failed (${String(error)})`);
    assert.equal(error.status, 500);
    assert.match(error.detail, /conversion webhook for .*Gizmo failed/);
    assert.match(
      error.detail,
      new RegExp(
        `converting Gizmo ${ns}/unlucky from ${GROUP}/v2 to ${GROUP}/v1: fromHub of v1 failed: 13 replicas is unlucky`,
      ),
    );
    await assert.rejects(get('v2', 'unlucky'), (e: unknown) => e instanceof KubeApiError && e.status === 404);
  });

  it('keeps __proto__ a field through /convert, in the spec and in the conversion data', async () => {
    const review = (desired: string, object: object, field: string) =>
      JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'proto', desiredAPIVersion: `${GROUP}/${desired}`, objects: [object] },
      }).replace('"spec":{', `"spec":{"__proto__":${field},`);
    type Answer = { response: { result: { status: string }; convertedObjects: Array<GizmoV1 & GizmoV2> } };
    // Spoke to hub: the spoke's own __proto__ is dropped by toHub as any unknown field; the
    // data's is restored as a field of spec (it was the prototype of a copy, and vanished).
    const up = await direct(
      review(
        'v2',
        {
          ...spoke('proto-up', { size: 2 }),
          metadata: {
            name: 'proto-up',
            namespace: ns,
            annotations: { [CONVERSION_DATA_ANNOTATION]: '{"spec":{"__proto__":{"tier":"data"}}}' },
          },
        },
        '{"polluted":true}',
      ),
    );
    assert.equal(up.status, 200);
    const hubSpec = (JSON.parse(up.text) as Answer).response.convertedObjects[0]!.spec as unknown as Record<
      string,
      unknown
    >;
    assert.ok(Object.hasOwn(hubSpec, '__proto__'));
    assert.deepEqual(hubSpec['__proto__'], { tier: 'data' });
    assert.deepEqual(Object.keys(hubSpec), ['replicas', '__proto__']);
    // Hub to spoke: the hub's __proto__ field, which v1 cannot hold, is kept in the data.
    const down = await direct(review('v1', hub('proto-down', { replicas: 3 }), '{"replicas":13}'));
    const asSpoke = (JSON.parse(down.text) as Answer).response.convertedObjects[0]!;
    assert.deepEqual(asSpoke.spec, { size: 3 }, 'replicas read from the hub’s own field, not the __proto__ one');
    assert.equal(asSpoke.metadata.annotations?.[CONVERSION_DATA_ANNOTATION], '{"spec":{"__proto__":{"replicas":13}}}');
  });

  it('ignores conversion data over the limit, converts without it, and records an Event on the object', async () => {
    // Stored as v1 (the storage version now): 4,000 fields of data, 79 KB, over the 64 KiB limit.
    const fields = Object.fromEntries(
      Array.from({ length: 4_000 }, (_, i) => [`field${String(i).padStart(5, '0')}`, i]),
    );
    const data = JSON.stringify({ spec: { replicas: 9, ...fields } });
    await env.client.request('POST', path('v1'), {
      ...spoke('big-data', { size: 3 }),
      metadata: { name: 'big-data', annotations: { [CONVERSION_DATA_ANNOTATION]: data } },
    });
    assert.deepEqual((await get<GizmoV2>('v2', 'big-data')).spec, { replicas: 3 });
    type EventList = { items: Array<{ reason?: string; message?: string; involvedObject?: { name?: string } }> };
    const event = await waitFor(
      async () =>
        (await env.client.request<EventList>('GET', `/api/v1/namespaces/${ns}/events`)).items.find(
          (e) => e.reason === 'ConversionDataIgnored' && e.involvedObject?.name === 'big-data',
        ),
      { timeoutMs: 30_000, what: 'a ConversionDataIgnored Event on big-data' },
    );
    assert.match(event.message ?? '', /annotation is \d+ bytes, over the limit of 65536: ignored/);
  });
});
