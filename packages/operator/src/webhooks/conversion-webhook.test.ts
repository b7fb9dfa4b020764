import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MalformedReviewError } from './admission-review.js';
import { applyMergePatch, CONVERSION_DATA_ANNOTATION, jsonEqual, mergePatch, splitPatch } from './conversion-data.js';
import { parseConversionReview, type ConversionReviewResponse, type ConvertibleObject } from './conversion-review.js';
import { ConversionWebhook } from './conversion-webhook.js';
import { HubSpokeConverter, type SpokeConversion } from './hub-spoke-converter.js';

// Hub v2 { replicas (0 allowed), tier? }; spoke v1 { size (at least 1) }, which has no tier;
// spoke v1alpha1 { count, tier? }, which holds everything.
interface Spec {
  replicas?: number;
  size?: number;
  count?: number;
  tier?: string;
}
type Obj = ConvertibleObject & { spec: Spec };

const v1: SpokeConversion<Obj, Obj> = {
  toHub: (spoke) => ({ ...spoke, spec: { replicas: spoke.spec.size } }),
  fromHub: (hub) => ({ ...hub, spec: { size: Math.max(1, hub.spec.replicas ?? 1) } }),
};
const v1alpha1: SpokeConversion<Obj, Obj> = {
  // In place, as a Go ConvertTo would.
  toHub(spoke) {
    spoke.spec.replicas = spoke.spec.count;
    delete spoke.spec.count;
    return spoke;
  },
  fromHub: (hub) => ({ spec: { count: hub.spec.replicas, ...(hub.spec.tier ? { tier: hub.spec.tier } : {}) } }),
};

const converter = (keepLostData?: boolean) =>
  new HubSpokeConverter({
    group: 'example.com',
    kind: 'Cache',
    hub: 'v2',
    spokes: { v1, v1alpha1 },
    ...(keepLostData === undefined ? {} : { keepLostData }),
  });

function cache(version: string, spec: Spec, annotations?: Record<string, string>): Obj {
  return {
    apiVersion: `example.com/${version}`,
    kind: 'Cache',
    metadata: {
      name: 'c',
      namespace: 'ns',
      uid: 'u-1',
      resourceVersion: '7',
      labels: { app: 'x' },
      ...(annotations ? { annotations } : {}),
    },
    spec,
  };
}

const review = (desiredAPIVersion: string, objects: unknown[], uid = 'r-1') =>
  JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid, desiredAPIVersion, objects },
  });

describe('parseConversionReview', () => {
  it('reads a ConversionReview', () => {
    const parsed = parseConversionReview(review('example.com/v1', [cache('v2', { replicas: 1 })]));
    assert.equal(parsed.request.uid, 'r-1');
    assert.equal(parsed.request.objects.length, 1);
  });

  it('says what is wrong with a body that is not one', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['{"kind":', /the body is not JSON/],
      ['[]', /not a JSON object/],
      [JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), /expected a ConversionReview/],
      [JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }), /has no request/],
      [review('example.com/v1', [], ''), /request.uid is missing/],
      [review('v1', []), /desiredAPIVersion "v1" is not <group>\/<version>/],
      [review('example.com/v1', [{ kind: 'Cache' }]), /objects\[0\].apiVersion is missing/],
      [review('example.com/v1', [cache('v2', {}), 3]), /objects\[1\] is not an object/],
      [
        JSON.stringify({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          request: { uid: 'x', desiredAPIVersion: 'a/b', objects: {} },
        }),
        /objects is not a list/,
      ],
    ];
    for (const [body, message] of cases) {
      assert.throws(
        () => parseConversionReview(body),
        (e: Error) => e instanceof MalformedReviewError && message.test(e.message),
      );
    }
  });
});

describe('merge patches', () => {
  it('diffs objects key by key, replaces arrays whole, removes with null, and applies back', () => {
    const from = { a: 1, b: { c: 2, d: [1, 2] }, gone: true, same: { x: 1 } };
    const to = { a: 1, b: { c: 3, d: [1] }, added: { y: 'z' }, same: { x: 1 }, skipped: undefined };
    const patch = mergePatch(from, to);
    assert.deepEqual(patch, { b: { c: 3, d: [1] }, added: { y: 'z' }, gone: null });
    assert.ok(jsonEqual(applyMergePatch(from, patch), to));
    assert.deepEqual(from.b, { c: 2, d: [1, 2] }, 'the target is not changed');
    assert.equal(mergePatch({ a: [1] }, { a: [1] }), undefined);
    assert.deepEqual(splitPatch(patch), [{ b: { c: 3, d: [1] }, added: { y: 'z' } }, { gone: null }]);
    assert.deepEqual(splitPatch({ a: { b: { c: 1, d: 2 } } }), [{ a: { b: { c: 1 } } }, { a: { b: { d: 2 } } }]);
    assert.equal(splitPatch({ a: { b: 1 } }), undefined, 'one change');
  });
});

describe('HubSpokeConverter', () => {
  it('converts hub to spoke and back, keeping apiVersion, kind and metadata right', async () => {
    const c = converter();
    const spoke = await c.convert(cache('v2', { replicas: 3 }), 'example.com/v1');
    assert.deepEqual(spoke, cache('v1', { size: 3 }));
    const hub = await c.convert(spoke, 'example.com/v2');
    assert.deepEqual(hub, cache('v2', { replicas: 3 }));
  });

  it('returns an object already at the desired version as it is', async () => {
    const object = cache('v1', { size: 2 });
    assert.equal(await converter().convert(object, 'example.com/v1'), object);
  });

  it('converts spoke to spoke through the hub', async () => {
    const c = converter();
    const spoke = await c.convert(cache('v1alpha1', { count: 4, tier: 'gold' }), 'example.com/v1');
    assert.deepEqual(spoke.spec, { size: 4 });
    assert.deepEqual(JSON.parse(spoke.metadata!.annotations![CONVERSION_DATA_ANNOTATION]!), { spec: { tier: 'gold' } });
    const back = await c.convert(spoke, 'example.com/v1alpha1');
    assert.deepEqual(back, cache('v1alpha1', { count: 4, tier: 'gold' }));
  });

  it('keeps the hub’s data a spoke cannot hold in the annotation: hub -> spoke -> hub is lossless', async () => {
    const c = converter();
    const hub = cache('v2', { replicas: 0, tier: 'gold' }, { team: 'a' });
    const spoke = await c.convert(hub, 'example.com/v1');
    assert.deepEqual(spoke.spec, { size: 1 });
    assert.deepEqual(JSON.parse(spoke.metadata!.annotations![CONVERSION_DATA_ANNOTATION]!), {
      spec: { replicas: 0, tier: 'gold' },
    });
    assert.equal(spoke.metadata!.annotations!.team, 'a', 'other annotations stay');
    assert.deepEqual(await c.convert(spoke, 'example.com/v2'), hub, 'the annotation is gone from the hub');
  });

  it('restores only what the spoke as written still agrees with: an edit through the spoke wins', async () => {
    const c = converter();
    const spoke = await c.convert(cache('v2', { replicas: 0, tier: 'gold' }), 'example.com/v1');
    const edited = { ...spoke, spec: { size: 5 } };
    const hub = await c.convert(edited, 'example.com/v2');
    assert.deepEqual(hub.spec, { replicas: 5, tier: 'gold' }, 'the new size, and the tier the spoke cannot hold');
    assert.equal(hub.metadata?.annotations, undefined);
  });

  it('writes no annotation when nothing is lost, and removes a stale one', async () => {
    const c = converter();
    const spoke = await c.convert(
      cache('v2', { replicas: 2 }, { [CONVERSION_DATA_ANNOTATION]: '{"spec":{"tier":"old"}}' }),
      'example.com/v1alpha1',
    );
    assert.equal(spoke.metadata?.annotations, undefined);
  });

  it('ignores an annotation that is not JSON', async () => {
    const hub = await converter().convert(
      cache('v1', { size: 2 }, { [CONVERSION_DATA_ANNOTATION]: 'not json' }),
      'example.com/v2',
    );
    assert.deepEqual(hub.spec, { replicas: 2 });
  });

  it('with keepLostData false, loses what the spoke cannot hold', async () => {
    const c = converter(false);
    const spoke = await c.convert(cache('v2', { replicas: 2, tier: 'gold' }), 'example.com/v1');
    assert.equal(spoke.metadata?.annotations, undefined);
    assert.deepEqual((await c.convert(spoke, 'example.com/v2')).spec, { replicas: 2 });
  });

  it('keeps name, namespace and uid whatever the converter returns; takes labels and annotations it sets', async () => {
    const c = new HubSpokeConverter({
      group: 'example.com',
      kind: 'Cache',
      hub: 'v2',
      spokes: {
        v1: {
          toHub: (spoke: Obj) => ({
            metadata: { name: 'renamed', uid: 'other', labels: { converted: 'yes' } },
            spec: { replicas: spoke.spec.size },
          }),
          fromHub: (hub: Obj) => ({ spec: { size: hub.spec.replicas } }),
        },
      },
    });
    const hub = await c.convert(cache('v1', { size: 1 }), 'example.com/v2');
    assert.equal(hub.metadata!.name, 'c');
    assert.equal(hub.metadata!.uid, 'u-1');
    assert.equal(hub.metadata!.resourceVersion, '7');
    assert.deepEqual(hub.metadata!.labels, { converted: 'yes' });
  });

  it('refuses a spoke without both directions, and the hub as a spoke', () => {
    assert.throws(
      () =>
        new HubSpokeConverter({ group: 'g', kind: 'K', hub: 'v2', spokes: { v1: { toHub: (x: Obj) => x } as never } }),
      /K v1: a spoke needs both toHub and fromHub/,
    );
    assert.throws(
      () => new HubSpokeConverter({ group: 'g', kind: 'K', hub: 'v2', spokes: { v2: v1 } }),
      /v2 is the hub and cannot be a spoke too/,
    );
  });
});

describe('ConversionWebhook', () => {
  const webhook = new ConversionWebhook([converter()]);

  it('answers with the uid, every object in order at the desired apiVersion, and Success', async () => {
    const objects = Array.from({ length: 50 }, (_, i) =>
      i % 2 ? cache('v2', { replicas: i }) : cache('v1alpha1', { count: i }),
    );
    const answer = await webhook.review(review('example.com/v1', objects, 'uid-9'));
    assert.equal(answer.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(answer.kind, 'ConversionReview');
    assert.equal(answer.response.uid, 'uid-9');
    assert.deepEqual(answer.response.result, { status: 'Success' });
    assert.deepEqual(
      answer.response.convertedObjects.map((o) => [o.apiVersion, (o as Obj).spec.size]),
      objects.map((_, i) => ['example.com/v1', Math.max(1, i)]),
    );
  });

  it('fails the review, saying which object and why, when a converter throws', async () => {
    const failures: unknown[] = [];
    const broken = new ConversionWebhook(
      [
        new HubSpokeConverter({
          group: 'example.com',
          kind: 'Cache',
          hub: 'v2',
          spokes: {
            v1: {
              toHub: () => {
                throw new Error('size 13 is unlucky');
              },
              fromHub: (hub: Obj) => hub,
            },
          },
        }),
      ],
      { onFailure: (error) => failures.push(error) },
    );
    const answer = await broken.review(review('example.com/v2', [cache('v1', { size: 13 })]));
    assert.equal(answer.response.result.status, 'Failure');
    assert.equal(
      answer.response.result.message,
      'converting Cache ns/c from example.com/v1 to example.com/v2: toHub of v1 failed: size 13 is unlucky',
    );
    assert.deepEqual(answer.response.convertedObjects, []);
    assert.equal((failures[0] as Error).message, 'size 13 is unlucky', 'the error goes to the log');
  });

  it('fails a conversion it cannot do: an unknown kind or version, a converter returning no object', async () => {
    const other = await webhook.review(review('example.com/v1', [{ ...cache('v2', {}), kind: 'Other' }]));
    assert.match(other.response.result.message!, /no converter for example.com\/v2 Other \(known: Cache.example.com\)/);
    const version = await webhook.review(review('example.com/v9', [cache('v2', {})]));
    assert.match(
      version.response.result.message!,
      /example.com\/v9, a version of Cache with no conversion \(known: v2, v1, v1alpha1\)/,
    );
    const empty = new ConversionWebhook([
      new HubSpokeConverter({
        group: 'example.com',
        kind: 'Cache',
        hub: 'v2',
        spokes: { v1: { toHub: () => undefined as never, fromHub: (hub: Obj) => hub } },
      }),
    ]);
    const nothing = await empty.review(review('example.com/v2', [cache('v1', {})]));
    assert.match(nothing.response.result.message!, /toHub of v1 returned undefined, not an object/);
  });

  it('answers Failure before the API server’s 30 s when the converters are too slow', async () => {
    const slow = new ConversionWebhook(
      [
        new HubSpokeConverter({
          group: 'example.com',
          kind: 'Cache',
          hub: 'v2',
          spokes: { v1: { toHub: () => new Promise(() => {}), fromHub: (hub: Obj) => hub } },
        }),
      ],
      { timeoutMs: 20 },
    );
    const answer = await slow.review(review('example.com/v2', [cache('v1', {})]));
    assert.match(answer.response.result.message!, /took longer than 20 ms/);
  });

  it('reports conversion data it ignores, naming the object, and converts without it', async () => {
    const ignored: Array<[string | undefined, string]> = [];
    const reporting = new ConversionWebhook([converter()], {
      onDataIgnored: (object, reason) => ignored.push([object.metadata?.name, reason]),
    });
    const large = JSON.stringify({ spec: { tier: 'x'.repeat(70_000) } });
    const answer = await reporting.review(
      review('example.com/v2', [cache('v1', { size: 2 }, { [CONVERSION_DATA_ANNOTATION]: large })]),
    );
    assert.deepEqual(answer.response.result, { status: 'Success' });
    assert.deepEqual((answer.response.convertedObjects[0] as Obj).spec, { replicas: 2 });
    assert.deepEqual(ignored, [
      [
        'c',
        `its ${CONVERSION_DATA_ANNOTATION} annotation is ${large.length} bytes, over the limit of 65536: ignored, the hub's data v1 cannot hold is not restored`,
      ],
    ]);
  });

  it('answers Failure at the deadline while converting a large LIST, and converts no more after it', async () => {
    let calls = 0;
    const passThrough: SpokeConversion<Obj, Obj> = {
      toHub: (spoke) => ({ spec: { ...spoke.spec, replicas: spoke.spec.size } }),
      fromHub: (hub) => {
        calls++;
        return { spec: { ...hub.spec, size: hub.spec.replicas } };
      },
    };
    const slow = new ConversionWebhook(
      [new HubSpokeConverter({ group: 'example.com', kind: 'Cache', hub: 'v2', spokes: { v1: passThrough } })],
      { timeoutMs: 10 },
    );
    // Each object's data has 4,000 fields the spoke shows as they are: none fits, all are tried.
    const spec: Record<string, unknown> = { replicas: 9 };
    for (let i = 0; i < 4_000; i++) spec[`f${i}`] = i;
    const data = JSON.stringify({ spec });
    const objects = Array.from({ length: 50 }, () => cache('v1', { size: 3 }, { [CONVERSION_DATA_ANNOTATION]: data }));
    const answer = await slow.review(review('example.com/v2', objects));
    assert.match(answer.response.result.message!, /converting 50 object\(s\) took longer than 10 ms/);
    const atAnswer = calls;
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(calls, atAnswer, 'no conversion goes on after the answer');
    assert.ok(atAnswer < 50 * 34, `stopped after ${atAnswer} fromHub calls`);
  });

  it('answers a normal review sent while a hostile one converts, before the hostile one ends', async () => {
    const passThrough: SpokeConversion<Obj, Obj> = {
      toHub: (spoke) => ({ spec: { ...spoke.spec, replicas: spoke.spec.size } }),
      fromHub: (hub) => ({ spec: { ...hub.spec, size: hub.spec.replicas } }),
    };
    const shared = new ConversionWebhook([
      new HubSpokeConverter({ group: 'example.com', kind: 'Cache', hub: 'v2', spokes: { v1: passThrough } }),
    ]);
    const spec: Record<string, unknown> = { replicas: 9 };
    for (let i = 0; i < 500; i++) spec[`f${i}`] = i;
    const data = JSON.stringify({ spec });
    const hostile = Array.from({ length: 10 }, () => cache('v1', { size: 3 }, { [CONVERSION_DATA_ANNOTATION]: data }));
    const order: string[] = [];
    const slow = shared.review(review('example.com/v2', hostile)).then(() => order.push('hostile'));
    // Arriving as a request does: in a callback of its own once the hostile one has started.
    const normal = new Promise<ConversionReviewResponse>((resolve) =>
      setTimeout(() => resolve(shared.review(review('example.com/v2', [cache('v1', { size: 2 })]))), 0),
    ).then((answer) => {
      order.push('normal');
      return answer;
    });
    assert.deepEqual((await normal).response.result, { status: 'Success' });
    await slow;
    assert.deepEqual(order, ['normal', 'hostile']);
  });

  it('keeps __proto__ a field through /convert, in the object and in the conversion data', async () => {
    const polluted = review('example.com/v2', [
      cache('v1alpha1', { count: 2 }, { [CONVERSION_DATA_ANNOTATION]: '{"spec":{"__proto__":{"tier":"data"}}}' }),
    ]).replace('"spec":{', '"spec":{"__proto__":{"tier":"gold"},');
    const seen: unknown[] = [];
    const watching = new ConversionWebhook([
      new HubSpokeConverter({
        group: 'example.com',
        kind: 'Cache',
        hub: 'v2',
        spokes: {
          v1alpha1: {
            toHub: (spoke: Obj) => {
              seen.push(spoke.spec.tier);
              return { spec: { ...spoke.spec, replicas: spoke.spec.count, count: undefined } };
            },
            fromHub: (hub: Obj) => {
              seen.push(hub.spec.tier);
              return { spec: { ...hub.spec, count: hub.spec.replicas, replicas: undefined } };
            },
          },
        },
      }),
    ]);
    const answer = await watching.review(polluted);
    assert.deepEqual(answer.response.result, { status: 'Success' });
    assert.ok(seen.length > 0 && seen.every((tier) => tier === undefined), 'no tier read through a prototype');
    const text = JSON.stringify(answer.response.convertedObjects[0]);
    assert.match(text, /"spec":\{"__proto__":\{"tier":"gold"\},"replicas":2\}/);
  });

  it('fails an object nested deeper than MAX_OBJECT_DEPTH, naming it', async () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    const body = review('example.com/v1', [cache('v2', { replicas: 1 })]).replace(
      '"spec":{',
      `"spec":{"deep":${deep},`,
    );
    const answer = await webhook.review(body);
    assert.equal(
      answer.response.result.message,
      'converting Cache ns/c from example.com/v2 to example.com/v1: the object nests deeper than 1000 levels (objects and arrays inside each other): refused',
    );
  });
});
