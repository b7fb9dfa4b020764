// The converter against what any user who writes a spoke can put in it: a conversion-data
// annotation of thousands of fields, one too large or too deep, `__proto__` keys; and the
// round trip hub -> spoke -> hub for any hub data.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_OBJECT_DEPTH } from '@nestor/core';
import fc from 'fast-check';
import { jsonObject, withoutNullFields } from '../test-support/json-arbitraries.js';
import { CONVERSION_DATA_ANNOTATION, DEFAULT_MAX_CONVERSION_DATA_BYTES } from './conversion-data.js';
import type { ConvertibleObject } from './conversion-review.js';
import {
  HubSpokeConverter,
  MAX_RESTORE_TRIALS,
  type ConvertOptions,
  type HubSpokeOptions,
  type SpokeConversion,
} from './hub-spoke-converter.js';

type Obj = ConvertibleObject & { spec: Record<string, unknown> };

/** Hub v2 { replicas, and anything else }; spoke v1 { size (at least 1) }, which holds nothing else. */
function counted(passThrough = false, options: Partial<HubSpokeOptions> = {}) {
  const calls = { toHub: 0, fromHub: 0 };
  const v1: SpokeConversion<Obj, Obj> = {
    toHub: (spoke) => {
      calls.toHub++;
      return { spec: { replicas: spoke.spec['size'] } };
    },
    // passThrough: the spoke shows every field it does not know, so no restored field fits.
    fromHub: (hub) => {
      calls.fromHub++;
      const { replicas, ...rest } = hub.spec;
      return { spec: { size: Math.max(1, Number(replicas ?? 1)), ...(passThrough ? rest : {}) } };
    },
  };
  const converter = new HubSpokeConverter({
    group: 'example.com',
    kind: 'Cache',
    hub: 'v2',
    spokes: { v1 },
    ...options,
  });
  return { converter, calls };
}

const spoke = (spec: Record<string, unknown>, data?: string): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Cache',
  metadata: {
    name: 'c',
    namespace: 'ns',
    ...(data === undefined ? {} : { annotations: { [CONVERSION_DATA_ANNOTATION]: data } }),
  },
  spec,
});

/** Conversion data of `n` fields under spec, and a replicas the spoke (size 3) no longer agrees with. */
function fields(n: number): Record<string, unknown> {
  const spec: Record<string, unknown> = { replicas: 9 };
  for (let i = 0; i < n; i++) spec[`f${i}`] = i;
  return { spec };
}

async function toHub(converter: HubSpokeConverter, object: Obj, options: ConvertOptions = {}) {
  const ignored: string[] = [];
  const hub = await converter.convert(object, 'example.com/v2', { ...options, onDataIgnored: (r) => ignored.push(r) });
  return { hub: hub as Obj, ignored };
}

describe('HubSpokeConverter under hostile conversion data', () => {
  it('restores thousands of fields with a bounded number of fromHub calls, whatever their count', async () => {
    for (const n of [1_000, 4_000]) {
      const { converter, calls } = counted();
      const data = JSON.stringify(fields(n));
      assert.ok(data.length < DEFAULT_MAX_CONVERSION_DATA_BYTES, 'under the limit: restored, not ignored');
      const { hub, ignored } = await toHub(converter, spoke({ size: 3 }, data));
      // Every field but replicas (the spoke's size wins), found by halving: one per leaf was 4,003 calls.
      assert.equal(Object.keys(hub.spec).length, n + 1);
      assert.equal(hub.spec['replicas'], 3);
      assert.equal(hub.spec[`f${n - 1}`], n - 1);
      assert.deepEqual(ignored, []);
      assert.ok(calls.fromHub <= MAX_RESTORE_TRIALS + 2, `${calls.fromHub} fromHub calls for ${n} fields`);
    }
  });

  it('stops after MAX_RESTORE_TRIALS when no part fits, and says what it left', async () => {
    const { converter, calls } = counted(true);
    const { hub, ignored } = await toHub(converter, spoke({ size: 3 }, JSON.stringify(fields(4_000))));
    assert.equal(calls.fromHub, MAX_RESTORE_TRIALS + 2, 'the whole, the spoke as written, and the trials');
    assert.deepEqual(hub.spec, { replicas: 3 });
    assert.equal(ignored.length, 1);
    assert.match(
      ignored[0]!,
      /holds more changes that v1 no longer agrees with than 32 trials sort out: \d+ part\(s\) of it not restored/,
    );
  });

  it('gives the event loop turns while it restores: a timer set before fires before it ends', async () => {
    const { converter, calls } = counted();
    let callsWhenFired: number | undefined;
    const timer = setTimeout(() => (callsWhenFired = calls.fromHub), 0);
    await toHub(converter, spoke({ size: 3 }, JSON.stringify(fields(4_000))));
    clearTimeout(timer);
    assert.notEqual(callsWhenFired, undefined, 'the timer fired during the conversion');
    assert.ok(callsWhenFired! < calls.fromHub, `fired after ${callsWhenFired} of ${calls.fromHub} fromHub calls`);
  });

  it('stops at its next step once the signal is aborted', async () => {
    const { converter, calls } = counted(true);
    const deadline = new AbortController();
    const reason = new Error('deadline');
    const converting = toHub(converter, spoke({ size: 3 }, JSON.stringify(fields(4_000))), { signal: deadline.signal });
    setTimeout(() => deadline.abort(reason), 0);
    await assert.rejects(converting, (e) => e === reason);
    const atAbort = calls.fromHub;
    assert.ok(atAbort < MAX_RESTORE_TRIALS + 2, `stopped after ${atAbort} fromHub calls`);
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(calls.fromHub, atAbort, 'no work after the abort');
  });

  it('ignores an annotation over maxConversionDataBytes, and one nested too deep, saying so', async () => {
    const { converter, calls } = counted();
    const large = JSON.stringify(fields(8_000));
    const { hub, ignored } = await toHub(converter, spoke({ size: 3 }, large));
    assert.deepEqual(hub.spec, { replicas: 3 });
    assert.equal(calls.fromHub, 0, 'not even read');
    assert.deepEqual(ignored, [
      `its ${CONVERSION_DATA_ANNOTATION} annotation is ${large.length} bytes, over the limit of 65536: ignored, the hub's data v1 cannot hold is not restored`,
    ]);
    const deep = `{"spec":{"x":${'['.repeat(MAX_OBJECT_DEPTH)}${']'.repeat(MAX_OBJECT_DEPTH)}}}`;
    const nested = await toHub(converter, spoke({ size: 3 }, deep));
    assert.deepEqual(nested.hub.spec, { replicas: 3 });
    assert.match(nested.ignored[0]!, /annotation nests deeper than 1000 levels: ignored/);
  });

  it('keeps no more than maxConversionDataBytes on a spoke, saying what is lost', async () => {
    const { converter } = counted(false, { maxConversionDataBytes: 100 });
    const hub = { ...spoke({ replicas: 2, notes: 'x'.repeat(200) }), apiVersion: 'example.com/v2' };
    const ignored: string[] = [];
    const asSpoke = await converter.convert(hub, 'example.com/v1', { onDataIgnored: (r) => ignored.push(r) });
    assert.equal(asSpoke.metadata?.annotations, undefined);
    assert.match(ignored[0]!, /the hub's data v1 cannot hold is 221 bytes of JSON, over the limit of 100: not kept/);
  });

  it('refuses an object nested deeper than MAX_OBJECT_DEPTH, even one already at the desired version', async () => {
    const { converter } = counted();
    const deep = JSON.parse(`${'['.repeat(5_000)}${']'.repeat(5_000)}`) as unknown;
    for (const version of ['v1', 'v2']) {
      await assert.rejects(
        converter.convert({ ...spoke({ size: 1, deep }), apiVersion: `example.com/${version}` }, 'example.com/v2'),
        /the object nests deeper than 1000 levels \(objects and arrays inside each other\): refused/,
      );
    }
  });

  it('keeps __proto__ as a field, in the object and in the conversion data', async () => {
    const seen: unknown[] = [];
    const converter = new HubSpokeConverter({
      group: 'example.com',
      kind: 'Cache',
      hub: 'v2',
      spokes: {
        // The spoke holds everything: spec passes through.
        v1: {
          toHub: (s: Obj) => {
            seen.push(s.spec['polluted']);
            return s;
          },
          fromHub: (h: Obj) => {
            seen.push(h.spec['polluted']);
            return h;
          },
        },
      },
    });
    const object = JSON.parse(
      JSON.stringify(spoke({ size: 1 }, '{"spec":{"__proto__":{"polluted":"from data"}}}')).replace(
        '"spec":{',
        '"spec":{"__proto__":{"polluted":true},',
      ),
    ) as Obj;
    const hub = (await converter.convert(object, 'example.com/v2')) as Obj;
    assert.deepEqual(seen, [undefined, undefined, undefined], 'no field read from a prototype');
    assert.equal(Object.getPrototypeOf(hub.spec), Object.prototype);
    // The spoke's own __proto__ field fits as written, so the data's is not restored over it.
    assert.equal(JSON.stringify(hub.spec), '{"__proto__":{"polluted":true},"size":1}');

    // A spoke that cannot hold it: restored from the data as a field.
    const restored = await toHub(counted().converter, spoke({ size: 2 }, '{"spec":{"__proto__":{"polluted":true}}}'));
    assert.equal(restored.hub.spec['polluted'], undefined);
    assert.equal(JSON.stringify(restored.hub.spec), '{"replicas":2,"__proto__":{"polluted":true}}');
  });
});

describe('HubSpokeConverter round trip (property)', () => {
  it('hub -> spoke -> hub loses nothing the spoke cannot hold', async () => {
    const { converter } = counted();
    // Any spec and top-level fields (null fields aside: a merge patch spells removal null).
    const hubs = fc
      .record({ replicas: fc.integer({ min: -2, max: 5 }), spec: jsonObject, status: jsonObject })
      .map(({ replicas, spec, status }) => {
        const hub: Obj = {
          apiVersion: 'example.com/v2',
          kind: 'Cache',
          metadata: { name: 'c', namespace: 'ns', uid: 'u' },
          spec: { ...(withoutNullFields(spec) as object), replicas },
        };
        Object.defineProperty(hub, 'status', {
          value: withoutNullFields(status),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        return hub;
      });
    await fc.assert(
      fc.asyncProperty(hubs, async (hub) => {
        const asSpoke = await converter.convert(hub, 'example.com/v1');
        assert.deepStrictEqual(await converter.convert(asSpoke, 'example.com/v2'), hub);
      }),
      { numRuns: 200 },
    );
  });
});
