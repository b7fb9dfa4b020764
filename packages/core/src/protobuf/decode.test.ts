import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { decodeMessage, formatDuration } from './decode-message.js';
import { decodeEnveloped, decodeList, errorBody } from './envelope.js';
import {
  isBuiltInKind,
  loadProtobufSchema,
  ProtobufSchema,
  type MessageSpec,
  type ProtobufSchemaTable,
} from './schema.js';
import { ProtobufListDecoder } from './list-stream.js';
import { ProtobufWatchDecoder } from './watch-frames.js';
import { ProtobufDecodeError, WireReader } from './wire-reader.js';
import {
  entry,
  envelope,
  frame,
  len,
  msg,
  num,
  str,
  tag,
  varint,
  type Bytes,
} from '../test-support/protobuf-writer.js';
import { cutAt } from '../test-support/cut-at.js';

function read(bytes: Bytes, use: (reader: WireReader) => unknown): unknown {
  const reader = new WireReader(Buffer.from(bytes));
  const value = use(reader);
  assert.equal(reader.pos, bytes.length, 'read to the end');
  return value;
}

describe('WireReader', () => {
  it('reads varints of every length, as JSON.parse would read the number', () => {
    for (const n of [0, 1, 127, 128, 300, 2 ** 28 - 1, 2 ** 28, 2 ** 31, 2 ** 32 + 5, 2 ** 53 - 1]) {
      assert.equal(
        read(varint(n), (r) => r.varint()),
        n,
      );
      assert.equal(
        read(varint(n), (r) => r.int64()),
        n,
      );
    }
    // Beyond 2^53: rounded once, exactly as JSON.parse rounds the decimal the JSON would carry.
    for (const big of [2n ** 53n + 1n, 9_223_372_036_854_775_807n, 1_234_567_890_123_456_789n]) {
      assert.equal(
        read(varint(big), (r) => r.int64()),
        JSON.parse(big.toString()),
      );
    }
  });

  it('reads negative int64 and int32 (sign-extended to 10 bytes)', () => {
    for (const n of [-1, -2, -300, -(2 ** 31), -(2 ** 40) - 7, -(2 ** 53) + 1]) {
      assert.equal(varint(n).length, 10);
      assert.equal(
        read(varint(n), (r) => r.int64()),
        n,
      );
    }
    assert.equal(
      read(varint(-9_223_372_036_854_775_808n), (r) => r.int64()),
      JSON.parse('-9223372036854775808'),
    );
    for (const n of [-1, -5, -(2 ** 31), 2 ** 31 - 1])
      assert.equal(
        read(varint(n), (r) => r.int32()),
        n,
      );
  });

  it('refuses a varint longer than 10 bytes and one cut short', () => {
    assert.throws(() => read(Array(11).fill(0xff), (r) => r.int64()), /varint longer than 10 bytes/);
    assert.throws(() => read(Array(11).fill(0xff), (r) => r.varint()), /varint longer than 10 bytes/);
    assert.throws(() => read([0x80, 0x80], (r) => r.varint()), ProtobufDecodeError);
    assert.throws(() => read([0x80, 0x80], (r) => r.int64()), ProtobufDecodeError);
    assert.throws(() => read([], (r) => r.varint()), /truncated/);
  });

  it('checks a length against the end of its message', () => {
    const reader = new WireReader(Buffer.from([5, 1, 2, 3]));
    assert.throws(() => reader.length(4), /truncated protobuf: 5 bytes of a length-delimited field \(3 left\)/);
  });

  it('skips fields of every wire type, and refuses groups', () => {
    const skipped = [...num(1, 7), ...tag(2, 1), 1, 2, 3, 4, 5, 6, 7, 8, ...str(3, 'x'), ...tag(4, 5), 1, 2, 3, 4];
    const reader = new WireReader(Buffer.from(skipped));
    while (reader.pos < skipped.length) {
      const t = reader.varint();
      reader.skip(t & 7, skipped.length);
    }
    assert.equal(reader.pos, skipped.length);
    assert.throws(() => new WireReader(Buffer.from([])).skip(3, 0), /wire type 3/);
  });
});

describe('decodeMessage with a hand-written table', () => {
  // One message of each sort the generator writes (see scripts/protobuf-schema).
  const schema = ProtobufSchema.compile({
    version: 'test',
    kinds: { 'test/v1/Thing': 0 },
    names: ['test.Thing', 'test.Inner', 'test.Inline'],
    messages: [
      [
        [1, 'name', 's', 4],
        [2, 'count', 'i32', 4],
        [3, 'replicas', 'i32', 2],
        [4, 'flag', 'b', 4],
        [5, 'ports', 'i32', 1],
        [6, 'labels', 'map', 0, ['s', null]],
        [7, 'data', 'map', 0, ['y', null]],
        [8, 'inner', 'm', 0, 1, '{"kept":""}'],
        [9, 'items', 'm', 1, 1, 'null'],
        [10, 'created', 'time', 16],
        [11, 'probed', 'time', 0, null, 'null'],
        [12, 'renewed', 'microtime', 2],
        [13, 'memory', 'quantity', 2],
        [14, 'port', 'intorstring', 0, null, '0'],
        [15, 'raw', 'rawjson', 0, null, 'null'],
        [16, 'extra', 'map', 0, ['strings', null]],
        [17, 'inline', 'm', 8, 2],
        [18, 'payload', 'y', 4],
        [19, 'ratio', 'f64', 4],
        [20, 'big', 'i64', 4],
        [21, 'always', 's', 0, null, '""'],
        [22, 'limits', 'map', 0, ['quantity', null]],
      ],
      [
        [1, 'kept', 's', 0, null, '""'],
        [2, 'extra', 's', 4],
      ],
      [
        [1, 'inlinedName', 's', 4],
        [2, 'inlinedList', 's', 1, null, 'null'],
      ],
    ],
  });
  const decode = (bytes: Bytes) => decodeEnveloped(schema, envelope('test/v1', 'Thing', bytes));

  it('writes what Go writes: zero values of fields without omitempty, none of those with it', () => {
    assert.deepStrictEqual(decode([]), {
      kind: 'Thing',
      apiVersion: 'test/v1',
      inner: { kept: '' },
      items: null,
      probed: null,
      port: 0,
      raw: null,
      always: '',
      inlinedList: null,
    });
  });

  it('decodes every sort of field', () => {
    const object = decode([
      ...str(1, 'thing'),
      ...num(2, 0), // omitempty zero: left out
      ...num(3, 0), // a pointer to 0: written
      ...num(4, 1),
      ...num(5, 80),
      ...num(5, 443),
      ...entry(6, 'a', str(2, 'x')),
      ...entry(6, 'b', str(2, '')),
      ...entry(7, 'bin', len(2, [0, 1, 255])),
      ...msg(8, str(2, 'e')),
      ...msg(9),
      ...msg(9, str(1, 'second')),
      ...msg(10), // a zero time, omitzero: left out
      ...msg(11, num(1, 1_767_323_045)),
      ...msg(12, num(1, 1_767_323_045), num(2, 123_456_789)),
      ...msg(13, str(1, '1500Mi')),
      ...msg(14, num(1, 1), str(3, 'http')),
      ...msg(15, len(1, Buffer.from('{"nested":[1,"two",null]}'))),
      ...entry(16, 'groups', [...msg(2, str(1, 'a'), str(1, 'b'))]),
      ...msg(17, str(1, 'inlined'), str(2, 'x'), str(2, 'y')),
      ...str(18, ''), // omitempty empty bytes: left out
      ...tag(19, 1),
      ...[...Buffer.from(new Float64Array([0.25]).buffer)],
      ...num(20, -42),
      ...entry(22, 'cpu', msg(2)), // a zero Quantity
    ]);
    assert.deepStrictEqual(object, {
      kind: 'Thing',
      apiVersion: 'test/v1',
      name: 'thing',
      replicas: 0,
      flag: true,
      ports: [80, 443],
      labels: { a: 'x', b: '' },
      data: { bin: 'AAH/' },
      inner: { extra: 'e', kept: '' },
      items: [{ kept: '' }, { kept: 'second' }],
      probed: '2026-01-02T03:04:05Z',
      renewed: '2026-01-02T03:04:05.123456Z',
      memory: '1500Mi',
      port: 'http',
      raw: { nested: [1, 'two', null] },
      extra: { groups: ['a', 'b'] },
      inlinedName: 'inlined',
      inlinedList: ['x', 'y'],
      ratio: 0.25,
      big: -42,
      limits: { cpu: '0' },
      always: '',
    });
    // Made by constructors sized by use (plain-object.ts), and plain objects all the same.
    for (const made of [object, object.labels, object.inner, (object.items as object[])[1]]) {
      assert.equal(Object.getPrototypeOf(made), Object.prototype);
      assert.equal((made as { constructor: unknown }).constructor, Object);
    }
  });

  it('reads a repeated scalar packed or not', () => {
    const packed = decode([...len(5, [...varint(80), ...varint(443), ...varint(-1)])]);
    const unpacked = decode([...num(5, 80), ...num(5, 443), ...num(5, -1)]);
    assert.deepEqual(packed.ports, [80, 443, -1]);
    assert.deepEqual(unpacked.ports, [80, 443, -1]);
  });

  it('skips fields it does not know (a newer server), of every wire type', () => {
    const object = decode([...num(99, 5), ...str(100, 'new'), ...tag(101, 1), 1, 2, 3, 4, 5, 6, 7, 8, ...str(1, 'n')]);
    assert.equal(object.name, 'n');
    assert.equal('99' in object, false);
  });

  it('an int-or-string of type 0 is its number', () => {
    assert.equal(decode([...msg(14, num(2, 8080))]).port, 8080);
    assert.equal(decode([...msg(14, num(1, 0), num(2, -1))]).port, -1);
  });

  it('says what is wrong with bad bytes: wire type, truncation, field 0, the magic, an unknown kind', () => {
    assert.throws(() => decode([...num(1, 5)]), /test\.Thing\.name has wire type 0, expected 2/);
    assert.throws(() => decode([...tag(1, 2), 10, 0x61]), /truncated protobuf/);
    assert.throws(() => decode([...num(0, 1)]), /field number 0 in test\.Thing/);
    assert.throws(() => decode([...msg(15, len(1, Buffer.from('{not json')))]), /RawExtension\) is not JSON/);
    assert.throws(() => decode([...msg(11, num(1, 2 ** 50))]), /a time of/);
    assert.throws(
      () => decodeEnveloped(schema, Buffer.from('{"kind":"Status"}')),
      /does not start with "k8s\\0" .*first 7b226b69/,
    );
    assert.throws(
      () => decodeEnveloped(schema, envelope('test/v1', 'Other', [])),
      /no protobuf schema for test\/v1 Other .*TransportOptions\.protobuf: false/,
    );
  });

  it('fails cleanly wherever the bytes are cut or flipped: a ProtobufDecodeError, never a hang or another error', () => {
    const good = envelope('test/v1', 'Thing', [
      ...str(1, 'thing'),
      ...entry(6, 'a', str(2, 'x')),
      ...msg(9, str(1, 'second')),
      ...msg(12, num(1, 1_767_323_045), num(2, 5)),
      ...msg(14, num(1, 1), str(3, 'http')),
      ...msg(17, str(1, 'inlined')),
      ...num(20, -42),
    ]);
    // A cut inside the object's bytes (the envelope's raw field) is always seen; one between the
    // envelope's own fields leaves a shorter valid message, as protobuf has no end marker.
    const rawStart = good.indexOf('Thing') + 'Thing'.length + 3;
    for (let cut = 0; cut < good.length; cut++) {
      const truncated = good.subarray(0, cut);
      if ((cut > 4 && cut < rawStart) || cut >= good.length - 2) continue; // (the last 2: contentEncoding)
      assert.throws(() => decodeEnveloped(schema, truncated), ProtobufDecodeError, `cut at ${cut}`);
    }
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const bad = Buffer.from(good);
      const at = 4 + Math.floor(random() * (bad.length - 4));
      bad[at] = Math.floor(random() * 256);
      try {
        decodeEnveloped(schema, bad);
      } catch (error) {
        assert.ok(error instanceof ProtobufDecodeError, `flip at ${at}: ${String(error)}`);
      }
    }
  });

  it('formats durations as Go does', () => {
    assert.equal(formatDuration(0), '0s');
    assert.equal(formatDuration(1_500_000), '1.5ms');
    assert.equal(formatDuration(90e9), '1m30s');
    assert.equal(formatDuration(3_600e9 + 0.5e9), '1h0m0.5s');
    assert.equal(formatDuration(-2e9), '-2s');
  });

  it('decodes into the object it is given, so nothing is copied', () => {
    const target = { kind: 'Thing' };
    const bytes = Buffer.from(str(1, 'n'));
    decodeMessage(new WireReader(bytes), bytes.length, schema.message('test/v1', 'Thing')!, target);
    assert.equal((target as Record<string, unknown>).name, 'n');
  });
});

describe('the generated table', () => {
  let schema: ProtobufSchema;
  before(async () => {
    schema = await loadProtobufSchema();
  });

  it('knows the built-in kinds, not custom resources', () => {
    assert.ok(isBuiltInKind('v1', 'ConfigMap'));
    assert.ok(isBuiltInKind('apps/v1', 'Deployment'));
    assert.ok(isBuiltInKind('coordination.k8s.io/v1', 'Lease'));
    assert.ok(!isBuiltInKind('bench.nestor.dev/v1', 'Widget'));
    assert.ok(!isBuiltInKind('v1', 'ConfigMapList'));
    assert.ok(schema.message('v1', 'ConfigMapList'));
    assert.ok(schema.message('meta.k8s.io/v1', 'Status'));
  });

  it('compiles every message of the table, its kinds asked for in any order, to the same specs', async () => {
    const table = JSON.parse((await import('./generated/schema-table.js')).SCHEMA_TABLE) as ProtobufSchemaTable;
    const forward = ProtobufSchema.compile(table);
    const backward = ProtobufSchema.compile(table);
    const kinds = Object.keys(table.kinds);
    const split = (name: string) => {
      const slash = name.lastIndexOf('/');
      return [name.slice(0, slash), name.slice(slash + 1)] as const;
    };
    for (const name of [...kinds].reverse()) backward.message(...split(name));
    for (const name of kinds) {
      const spec = forward.message(...split(name));
      assert.ok(spec && spec.fields.length > 0, name);
      assert.deepEqual(summary(spec), summary(backward.message(...split(name))!), name);
    }
    assert.ok(isBuiltInKind('v1', 'Pod') && forward.message('v1', 'NoSuchKind') === undefined);
  });

  it('decodes a ConfigMap list page, items without kind as in JSON, Secret-style bytes as base64', () => {
    const meta = (name: string) =>
      msg(1, str(1, name), str(2, ''), str(3, 'ns'), str(6, '42'), num(7, 0), msg(8, num(1, 1_767_323_045)));
    const list = envelope('v1', 'ConfigMapList', [
      ...msg(1, str(2, '43'), str(3, 'token'), num(4, 7)),
      ...msg(2, meta('a'), entry(2, 'k', str(2, 'v')), entry(3, 'bin', len(2, Buffer.from('hi')))),
      ...msg(2, meta('b'), num(4, 1)),
    ]);
    assert.deepStrictEqual(decodeList(schema, list), {
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '43', continue: 'token', remainingItemCount: 7 },
      items: [
        {
          metadata: { name: 'a', namespace: 'ns', resourceVersion: '42', creationTimestamp: '2026-01-02T03:04:05Z' },
          data: { k: 'v' },
          binaryData: { bin: 'aGk=' },
        },
        {
          metadata: { name: 'b', namespace: 'ns', resourceVersion: '42', creationTimestamp: '2026-01-02T03:04:05Z' },
          immutable: true,
        },
      ],
    });
  });

  it('decodes a list item by item as its body arrives, wherever the chunks are cut', () => {
    const item = (name: string) => msg(2, msg(1, str(1, name)), entry(2, 'k', str(2, 'v'.repeat(40))));
    const body = envelope('v1', 'ConfigMapList', [...msg(1, str(2, '43')), ...item('a'), ...item('b'), ...item('c')]);
    const whole = decodeList(schema, body);
    const decode = (cuts: number[]) => {
      const decoder = new ProtobufListDecoder(schema);
      const items = cutAt(body, cuts).flatMap((chunk) => decoder.write(chunk));
      decoder.end();
      return { metadata: decoder.metadata, items };
    };
    for (let cut = 0; cut <= body.length; cut++) {
      assert.deepStrictEqual(decode([cut]), { metadata: whole.metadata, items: whole.items }, `cut at ${cut}`);
    }
    const oneByOne = decode(Array.from({ length: body.length }, (_, i) => i));
    assert.deepStrictEqual(oneByOne.items, whole.items);
    // Items come out as soon as they are complete.
    const decoder = new ProtobufListDecoder(schema);
    assert.equal(decoder.write(body.subarray(0, body.length - 10)).length, 2, 'two items before the third is in');
    // (The last 2 bytes are the envelope's contentEncoding, after the list.)
    for (let cut = 0; cut < body.length - 2; cut++) {
      const truncated = new ProtobufListDecoder(schema);
      truncated.write(body.subarray(0, cut));
      assert.throws(() => truncated.end(), /the LIST body ended before the list did/, `cut at ${cut}`);
    }
    assert.throws(
      () => new ProtobufListDecoder(schema).write(Buffer.from('{"items":[]}')),
      /does not start with "k8s\\0"/,
    );
    assert.throws(
      () => new ProtobufListDecoder(schema).write(envelope('v1', 'Nothing', [])),
      /no protobuf schema for the list v1 Nothing/,
    );
  });

  it('leaves managedFields undecoded when asked', () => {
    const managed = msg(17, str(1, 'kubectl'), str(2, 'Update'), msg(7, len(1, Buffer.from('{"f:data":{}}'))));
    const object = envelope('v1', 'ConfigMap', msg(1, str(1, 'a'), managed));
    assert.deepStrictEqual(decodeEnveloped(schema, object).metadata, {
      name: 'a',
      managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:data': {} } }],
    });
    assert.deepStrictEqual(decodeEnveloped(schema.withoutManagedFields(), object).metadata, { name: 'a' });
  });

  it('reads a protobuf Status as the body of a failure', () => {
    const status = envelope('v1', 'Status', [
      ...msg(1),
      ...str(2, 'Failure'),
      ...str(3, 'gone'),
      ...str(4, 'Expired'),
      ...num(6, 410),
    ]);
    assert.deepStrictEqual(errorBody(status, 'application/vnd.kubernetes.protobuf', schema), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'gone',
      reason: 'Expired',
      code: 410,
    });
    const text = Buffer.from('plain text');
    assert.equal(errorBody(text, 'text/plain', schema), text);
  });

  describe('ProtobufWatchDecoder', () => {
    const event = (type: string, name: string) =>
      [...str(1, type), ...msg(2, len(1, envelope('v1', 'ConfigMap', msg(1, str(1, name), str(6, '7')))))] as Bytes;
    const stream = () =>
      Buffer.concat([frame(event('ADDED', 'a')), frame(event('MODIFIED', 'ü')), frame(event('BOOKMARK', ''))]);
    const decodeCut = (bytes: Buffer, cuts: number[]) => {
      const decoder = new ProtobufWatchDecoder(schema);
      const events = cutAt(bytes, cuts).flatMap((chunk) => decoder.write(chunk));
      decoder.end();
      return events;
    };
    const expected = [
      { type: 'ADDED', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', resourceVersion: '7' } } },
      {
        type: 'MODIFIED',
        object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'ü', resourceVersion: '7' } },
      },
      { type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '7' } } },
    ];

    it('decodes the same events wherever the chunks are cut', () => {
      const bytes = stream();
      for (let cut = 0; cut <= bytes.length; cut++)
        assert.deepStrictEqual(decodeCut(bytes, [cut]), expected, `cut at ${cut}`);
      assert.deepStrictEqual(
        decodeCut(
          bytes,
          Array.from({ length: bytes.length }, (_, i) => i),
        ),
        expected,
        'one byte at a time',
      );
    });

    it('reads an event that comes enveloped too', () => {
      const bytes = frame(envelope('meta.k8s.io/v1', 'WatchEvent', event('DELETED', 'x')));
      assert.deepStrictEqual(decodeCut(bytes, []), [
        {
          type: 'DELETED',
          object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', resourceVersion: '7' } },
        },
      ]);
    });

    it('refuses a frame over its limit and a stream that ends inside a frame', () => {
      const small = new ProtobufWatchDecoder(schema, 16);
      assert.throws(() => small.write(frame(event('ADDED', 'a'))), /watch frame of \d+ bytes exceeds the limit of 16/);
      const decoder = new ProtobufWatchDecoder(schema);
      decoder.write(stream().subarray(0, 10));
      assert.throws(() => decoder.end(), /ended inside a frame \(10 bytes of it arrived\)/);
    });

    it('refuses an event without an object', () => {
      assert.throws(() => decodeCut(frame(str(1, 'ADDED')), []), /a watch event \(type ADDED\) came without an object/);
    });
  });
});

/** What a compiled message decodes to, comparable: its fields, the zero values it always writes, their depth. */
function summary(spec: MessageSpec): unknown {
  return {
    name: spec.name,
    fields: spec.fields.map((f) => f && { json: f.json, type: f.type, message: f.message?.name }),
    always: spec.always.map(({ json, zero }) => [json, zero()]),
    zeroDepth: spec.zeroDepth,
  };
}
