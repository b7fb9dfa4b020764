import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { JsonLineDecoder } from '../json-lines.js';
import { ObjectTooDeepError } from '../object-depth.js';
import { cutAt } from '../test-support/cut-at.js';
import { configMap, envelope, msg, str, watchFrame, type ConfigMapFields } from '../test-support/protobuf-writer.js';
import { decodeEnveloped, decodeList } from './envelope.js';
import { ProtobufListDecoder } from './list-stream.js';
import { loadProtobufSchema, type ProtobufSchema } from './schema.js';
import { ProtobufWatchDecoder } from './watch-frames.js';
import { ProtobufDecodeError, WireReader } from './wire-reader.js';

// Bounded so that `npm test` keeps its budget: each property runs in well under 2 s.
const RUNS = { numRuns: Number(process.env.PROPERTY_RUNS ?? 200) };

/** The decoders' own errors: anything else (RangeError, TypeError) is a bug. */
const typed = (error: unknown) => error instanceof ProtobufDecodeError || error instanceof ObjectTooDeepError;

/** What a call gives: its value, or the class of its error, which must be one of the decoder's own. */
function outcome<T>(run: () => T, allowed: (error: unknown) => boolean = typed): { value: T } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    if (!allowed(error)) throw error;
    return { error: (error as Error).constructor.name };
  }
}
/** JSON.parse's error is the JSON line decoder's. */
const syntax = (error: unknown) => error instanceof SyntaxError;

/** `bytes` cut at arbitrary offsets. */
const chunked = (bytes: Buffer, cuts: number[]): Buffer[] =>
  cutAt(
    bytes,
    [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b),
  );
const cuts = fc.array(fc.nat(), { maxLength: 12 });

/** Keys as a ConfigMap may have them, `__proto__` and other Object.prototype names included. */
const key = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'a.b', '-x_1'),
  fc.stringMatching(/^[-._a-zA-Z0-9]{1,12}$/),
);
const configMaps = fc.record({
  name: fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/),
  namespace: fc.option(fc.constantFrom('default', 'ns-1'), { nil: undefined }),
  resourceVersion: fc.option(fc.integer({ min: 1, max: 1e9 }).map(String), { nil: undefined }),
  data: fc.option(
    fc.uniqueArray(fc.tuple(key, fc.string({ unit: 'grapheme', maxLength: 20 })), {
      selector: ([k]) => k,
      maxLength: 6,
    }),
    {
      nil: undefined,
    },
  ),
});
type GeneratedConfigMap = { name: string; namespace?: string; resourceVersion?: string; data?: [string, string][] };
const fields = (cm: GeneratedConfigMap): ConfigMapFields => ({
  name: cm.name,
  ...(cm.namespace ? { namespace: cm.namespace } : {}),
  ...(cm.resourceVersion ? { resourceVersion: cm.resourceVersion } : {}),
  ...(cm.data ? { data: Object.fromEntries(cm.data) } : {}),
});
/** The JSON the API server would send for the same ConfigMap, parsed as a JSON client would. */
const asJson = (cm: GeneratedConfigMap) =>
  JSON.parse(
    JSON.stringify({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: {
        name: cm.name,
        ...(cm.namespace ? { namespace: cm.namespace } : {}),
        ...(cm.resourceVersion ? { resourceVersion: cm.resourceVersion } : {}),
      },
      ...(cm.data && cm.data.length > 0 ? { data: Object.fromEntries(cm.data) } : {}),
    }),
  ) as unknown;

describe('decoders of untrusted bytes, property-based', () => {
  let schema: ProtobufSchema;
  before(async () => {
    schema = await loadProtobufSchema();
  });

  it('WireReader: any read of any bytes returns or throws a ProtobufDecodeError, never past its limit', () => {
    const op = fc.constantFrom('varint', 'int64', 'uint64', 'int32', 'double', 'string', 'skip');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.array(op, { maxLength: 20 }), fc.nat(7), (bytes, ops, wire) => {
        const buf = Buffer.from(bytes);
        const limit = Math.floor(buf.length / 2) + (buf.length % 2);
        const reader = new WireReader(buf, 0, limit);
        try {
          for (const name of ops) {
            if (name === 'string') reader.string(reader.length(limit));
            else if (name === 'skip') reader.skip(wire, limit);
            else reader[name as 'varint']();
            assert.ok(reader.pos <= limit, `${name} read past the limit`);
          }
        } catch (error) {
          if (!(error instanceof ProtobufDecodeError)) throw error;
        }
      }),
      RUNS,
    );
  });

  it('decodeEnveloped: any message bytes of a real kind decode or are refused with a typed error', () => {
    const kinds = fc.constantFrom(
      ['v1', 'ConfigMap'],
      ['v1', 'Pod'],
      ['apps/v1', 'Deployment'],
      ['scheduling.k8s.io/v1beta1', 'Workload'],
      ['v1', 'Status'],
    );
    fc.assert(
      fc.property(kinds, fc.uint8Array({ maxLength: 200 }), ([apiVersion, kind], raw) => {
        outcome(() => decodeEnveloped(schema, envelope(apiVersion!, kind!, Buffer.from(raw))));
      }),
      RUNS,
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        outcome(() => decodeEnveloped(schema, Buffer.from(bytes)));
      }),
      RUNS,
    );
  });

  it('decodeEnveloped: a ConfigMap round-trips to what the JSON of the same object parses to, __proto__ keys included', () => {
    fc.assert(
      fc.property(configMaps, (cm) => {
        const decoded = decodeEnveloped(schema, envelope('v1', 'ConfigMap', configMap(fields(cm))));
        assert.deepStrictEqual(decoded, asJson(cm));
      }),
      RUNS,
    );
  });

  it('ProtobufWatchDecoder: any chunking of a stream gives what one chunk gives', () => {
    const streams = fc.array(fc.tuple(fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), configMaps), { maxLength: 5 });
    const decode = (chunks: Buffer[]) => {
      const decoder = new ProtobufWatchDecoder(schema, 4096);
      const events = chunks.flatMap((chunk) => decoder.write(chunk));
      decoder.end();
      return events;
    };
    fc.assert(
      fc.property(streams, cuts, (events, at) => {
        const bytes = Buffer.concat(
          events.map(([type, cm]) => watchFrame(type, envelope('v1', 'ConfigMap', configMap(fields(cm))))),
        );
        const whole = decode([bytes]);
        assert.deepStrictEqual(
          whole,
          events.map(([type, cm]) => ({ type, object: asJson(cm) })),
        );
        assert.deepStrictEqual(decode(chunked(bytes, at)), whole);
      }),
      RUNS,
    );
    // Any bytes, however cut: events or a typed error, the same either way.
    const noise = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc
        .tuple(streams, fc.array(fc.tuple(fc.nat(), fc.nat(255)), { minLength: 1, maxLength: 4 }))
        .map(([events, flips]) => {
          const bytes = Buffer.concat(
            events.map(([type, cm]) => watchFrame(type, envelope('v1', 'ConfigMap', configMap(fields(cm))))),
          );
          for (const [at, byte] of flips) if (bytes.length > 0) bytes[at % bytes.length] = byte;
          return bytes;
        }),
    );
    fc.assert(
      fc.property(noise, cuts, (bytes, at) => {
        const whole = outcome(() => decode([bytes]));
        const cut = outcome(() => decode(chunked(bytes, at)));
        assert.deepStrictEqual(cut, whole);
      }),
      RUNS,
    );
  });

  it('ProtobufListDecoder: any chunking of a LIST gives the items decodeList gives; noise is refused cleanly', () => {
    const lists = fc.array(configMaps, { maxLength: 6 });
    const body = (items: GeneratedConfigMap[]) =>
      envelope('v1', 'ConfigMapList', [
        ...msg(1, str(2, '77')),
        ...items.flatMap((cm) => msg(2, configMap(fields(cm)))),
      ]);
    const decode = (chunks: Buffer[]) => {
      const decoder = new ProtobufListDecoder(schema);
      const items = chunks.flatMap((chunk) => decoder.write(chunk));
      decoder.end();
      return { metadata: decoder.metadata, items };
    };
    fc.assert(
      fc.property(lists, cuts, (items, at) => {
        const bytes = body(items);
        const whole = decodeList(schema, bytes);
        assert.deepStrictEqual(decode(chunked(bytes, at)), { metadata: whole.metadata, items: whole.items ?? [] });
        assert.deepStrictEqual(
          whole.items ?? [],
          items.map((cm) => {
            const { kind: _kind, apiVersion: _apiVersion, ...item } = asJson(cm) as Record<string, unknown>;
            return item;
          }),
        );
      }),
      RUNS,
    );
    const noisy = fc
      .tuple(lists, fc.array(fc.tuple(fc.nat(), fc.nat(255)), { minLength: 1, maxLength: 4 }))
      .map(([items, flips]) => {
        const bytes = body(items);
        for (const [at, byte] of flips) bytes[at % bytes.length] = byte;
        return bytes;
      });
    fc.assert(
      fc.property(
        fc.oneof(
          noisy,
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        ),
        cuts,
        (bytes, at) => {
          const cut = outcome(() => decode(chunked(bytes, at)));
          const whole = outcome(() => decode([bytes]));
          assert.deepStrictEqual(cut, whole);
        },
      ),
      RUNS,
    );
  });

  it('JsonLineDecoder: any chunking of any JSON lines gives the values; any bytes give values or a SyntaxError', () => {
    const decode = (chunks: Buffer[]) => {
      const decoder = new JsonLineDecoder(1024 * 1024);
      const values = chunks.flatMap((chunk) => decoder.write(chunk));
      const last = decoder.end();
      return last === undefined ? values : [...values, last];
    };
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 6 }), cuts, (values, at) => {
        const text = values.map((value) => JSON.stringify(value)).join('\n');
        const bytes = Buffer.from(text + '\n');
        const expected = values.map((value) => JSON.parse(JSON.stringify(value)) as unknown);
        assert.deepStrictEqual(decode(chunked(bytes, at)), expected);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
          fc
            .string({ unit: fc.constantFrom('{', '}', '[', ']', '"', '\\', ':', ',', '\n', '1', 'a', ' ', 'é') })
            .map((s) => Buffer.from(s)),
        ),
        cuts,
        (bytes, at) => {
          assert.deepStrictEqual(
            outcome(() => decode(chunked(bytes, at)), syntax),
            outcome(() => decode([bytes]), syntax),
          );
        },
      ),
      RUNS,
    );
  });
});
