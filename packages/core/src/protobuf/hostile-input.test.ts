import assert from 'node:assert/strict';
import { before, describe, it, mock } from 'node:test';
import { MAX_OBJECT_DEPTH } from '../defaults.js';
import { JsonLineDecoder } from '../json-lines.js';
import { ObjectTooDeepError } from '../object-depth.js';
import {
  configMap,
  deepWorkload,
  envelope,
  msg,
  str,
  tag,
  varint,
  watchFrame,
  type Bytes,
} from '../test-support/protobuf-writer.js';
import { decodeEnveloped, decodeList } from './envelope.js';
import { ProtobufListDecoder } from './list-stream.js';
import { loadProtobufSchema, type ProtobufSchema } from './schema.js';
import { ProtobufWatchDecoder } from './watch-frames.js';

/** How deep a value nests (objects and arrays), counted without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Feeds `bytes` in chunks of `size`; returns what each write gave, flattened. */
function feed<T>(decoder: { write(chunk: Buffer): T[] }, bytes: Buffer, size: number): T[] {
  const out: T[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...decoder.write(bytes.subarray(i, i + size)));
  return out;
}

const WORKLOAD = 'scheduling.k8s.io/v1beta1';
/**
 * Templates nested n times make a Workload 2n + 5 deep in JSON (the leaf has an empty
 * schedulingPolicy): this many is the deepest within MAX_OBJECT_DEPTH.
 */
const AT_LIMIT = Math.floor((MAX_OBJECT_DEPTH - 5) / 2);

describe('decoders of what the API server sends, under hostile input', () => {
  let schema: ProtobufSchema;
  before(async () => {
    schema = await loadProtobufSchema();
  });

  describe('a large frame or line in small chunks', () => {
    it('joins a 16 MB watch frame arriving in 16 KiB chunks once, when it is all in', () => {
      const value = 'x'.repeat(16 * 1024 * 1024);
      // Built from Buffers: the number[] writer is too slow for 16 MB.
      const lengthDelimited = (field: number, bytes: Buffer) =>
        Buffer.concat([Buffer.from([...tag(field, 2), ...varint(bytes.length)]), bytes]);
      const data = lengthDelimited(
        2,
        Buffer.concat([Buffer.from(str(1, 'k')), lengthDelimited(2, Buffer.from(value))]),
      );
      const object = envelope('v1', 'ConfigMap', Buffer.concat([Buffer.from(configMap({ name: 'big' })), data]));
      const event = Buffer.concat([Buffer.from(str(1, 'ADDED')), lengthDelimited(2, lengthDelimited(1, object))]);
      const bytes = Buffer.concat([Buffer.from([0, 0, 0, 0]), event]);
      bytes.writeUInt32BE(event.length);
      const concat = mock.method(Buffer, 'concat');
      try {
        const events = feed(new ProtobufWatchDecoder(schema), bytes, 16 * 1024);
        assert.equal(concat.mock.callCount(), 1, 'the frame is joined once, not once per chunk');
        assert.equal(events.length, 1);
        assert.equal((events[0]!.object.data as { k: string }).k.length, value.length);
      } finally {
        concat.mock.restore();
      }
    });

    it('joins a 16 MB JSON watch line arriving in 16 KiB chunks once', () => {
      const value = 'x'.repeat(16 * 1024 * 1024);
      const bytes = Buffer.from(JSON.stringify({ type: 'ADDED', object: { data: { k: value } } }) + '\n');
      const concat = mock.method(Buffer, 'concat');
      try {
        const values = feed(new JsonLineDecoder<{ object: { data: { k: string } } }>(), bytes, 16 * 1024);
        assert.equal(concat.mock.callCount(), 1);
        assert.equal(values.length, 1);
        assert.equal(values[0]!.object.data.k.length, value.length);
      } finally {
        concat.mock.restore();
      }
    });
  });

  describe(`an object nested deeper than MAX_OBJECT_DEPTH (${MAX_OBJECT_DEPTH})`, () => {
    it('decodes one at the limit, counting what the JSON has: arrays, objects, empty zero values', () => {
      const object = decodeEnveloped(schema, envelope(WORKLOAD, 'Workload', deepWorkload('edge', '5', AT_LIMIT)));
      assert.equal(depthOf(object), MAX_OBJECT_DEPTH - 1);
      assert.throws(
        () => decodeEnveloped(schema, envelope(WORKLOAD, 'Workload', deepWorkload('edge', '5', AT_LIMIT + 1))),
        ObjectTooDeepError,
        `${MAX_OBJECT_DEPTH + 1} deep`,
      );
    });

    it('refuses one a level deeper with an ObjectTooDeepError naming it, not a RangeError', () => {
      for (const depth of [AT_LIMIT + 1, 5000, 50_000]) {
        const bytes = envelope(WORKLOAD, 'Workload', deepWorkload('deep', '5', depth));
        assert.throws(
          () => decodeEnveloped(schema, bytes),
          (error: unknown) =>
            error instanceof ObjectTooDeepError &&
            error.message.startsWith(
              'Workload ns/deep (resourceVersion 5) nests objects and arrays more than 1000 deep',
            ) &&
            error.object.metadata?.name === 'deep',
        );
      }
    });

    it('a watch stream hands the refused event on, with its metadata, and decodes the events after it', () => {
      const bytes = Buffer.concat([
        watchFrame('ADDED', envelope(WORKLOAD, 'Workload', deepWorkload('deep', '5', 5000))),
        watchFrame('MODIFIED', envelope('v1', 'ConfigMap', configMap({ name: 'next', resourceVersion: '6' }))),
      ]);
      for (const size of [bytes.length, 16 * 1024, 1000]) {
        const [refused, next, ...rest] = feed(new ProtobufWatchDecoder(schema), bytes, size);
        assert.equal(rest.length, 0);
        assert.equal(refused!.type, 'ADDED');
        assert.ok(refused!.refused instanceof ObjectTooDeepError);
        assert.deepStrictEqual(refused!.object, {
          kind: 'Workload',
          apiVersion: WORKLOAD,
          metadata: { name: 'deep', namespace: 'ns', resourceVersion: '5' },
        });
        assert.deepStrictEqual(next, {
          type: 'MODIFIED',
          object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'next', resourceVersion: '6' } },
        });
      }
    });

    it('a LIST leaves the refused item out, names it, and goes on with the next items', () => {
      const item = (bytes: Bytes) => msg(2, bytes);
      const body = envelope(WORKLOAD, 'WorkloadList', [
        ...msg(1, str(2, '9')),
        ...item(deepWorkload('a', '1', 0)),
        ...item(deepWorkload('deep', '2', 5000)),
        ...item(deepWorkload('c', '3', 0)),
      ]);
      for (const size of [body.length, 4096, 100]) {
        const decoder = new ProtobufListDecoder<{ metadata: { name: string } }>(schema);
        const items = feed(decoder, body, size);
        decoder.end();
        assert.deepEqual(
          items.map((i) => i.metadata.name),
          ['a', 'c'],
        );
        assert.equal(decoder.metadata.resourceVersion, '9');
        assert.equal(decoder.refused.length, 1);
        assert.match(decoder.refused[0]!.message, /^Workload ns\/deep \(resourceVersion 2\) nests objects/);
      }
    });
  });

  describe('a __proto__ key is data, as JSON.parse has it', () => {
    // (Object.fromEntries makes own properties; a literal's `__proto__:` sets the prototype.)
    const wire = {
      name: 'cm',
      resourceVersion: '3',
      labels: Object.fromEntries([['__proto__', 'l']]),
      data: Object.fromEntries([
        ['__proto__', 'p'],
        ['constructor', 'c'],
        ['a', 'b'],
      ]),
    };
    // The JSON the API server would send for the same object.
    const expected = JSON.parse(
      '{"metadata":{"name":"cm","resourceVersion":"3","labels":{"__proto__":"l"}},"data":{"__proto__":"p","constructor":"c","a":"b"}}',
    ) as Record<string, unknown>;
    const check = (object: Record<string, unknown>) => {
      const decoded = object.data as Record<string, unknown>;
      assert.ok(Object.hasOwn(decoded, '__proto__'), 'an own property');
      assert.equal(Object.getPrototypeOf(decoded), Object.prototype, 'a plain object still');
      assert.deepEqual(Object.keys(decoded), ['__proto__', 'constructor', 'a']);
      assert.deepStrictEqual(
        { metadata: object.metadata, data: object.data },
        { metadata: expected.metadata, data: expected.data },
      );
      assert.equal(JSON.stringify(decoded), '{"__proto__":"p","constructor":"c","a":"b"}');
    };

    it('in a single object', () => {
      check(decodeEnveloped(schema, envelope('v1', 'ConfigMap', configMap(wire))));
    });

    it('in a LIST, whole and streamed', () => {
      const body = envelope('v1', 'ConfigMapList', [...msg(1, str(2, '9')), ...msg(2, configMap(wire))]);
      check(decodeList<Record<string, unknown>>(schema, body).items![0]!);
      const decoder = new ProtobufListDecoder<Record<string, unknown>>(schema);
      const items = feed(decoder, body, 7);
      decoder.end();
      check(items[0]!);
    });

    it('in a WATCH', () => {
      const events = feed(
        new ProtobufWatchDecoder(schema),
        watchFrame('ADDED', envelope('v1', 'ConfigMap', configMap(wire))),
        5,
      );
      check(events[0]!.object);
    });

    it('in a JSON watch line', () => {
      const line = Buffer.from(JSON.stringify({ type: 'ADDED', object: expected }) + '\n');
      const [event] = feed(new JsonLineDecoder<{ object: Record<string, unknown> }>(), line, 3);
      check(event!.object);
    });
  });
});
