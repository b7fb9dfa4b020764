// A small protobuf writer for tests: enough to build what the API server sends (enveloped
// objects, LIST bodies, watch frames), and bytes it never would.

export type Bytes = number[];

export function varint(value: number | bigint): Bytes {
  let n = BigInt.asUintN(64, BigInt(value));
  const out: Bytes = [];
  while (n >= 0x80n) {
    out.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  out.push(Number(n));
  return out;
}

export const tag = (field: number, wire: number): Bytes => varint((field << 3) | wire);
export const num = (field: number, value: number | bigint): Bytes => [...tag(field, 0), ...varint(value)];
export const len = (field: number, bytes: Bytes | Buffer): Bytes => [
  ...tag(field, 2),
  ...varint(bytes.length),
  ...bytes,
];
export const str = (field: number, text: string): Bytes => len(field, Buffer.from(text));
export const msg = (field: number, ...parts: Bytes[]): Bytes => len(field, parts.flat());
/** A map entry: key (1), value (2). */
export const entry = (field: number, key: string, value: Bytes): Bytes => msg(field, str(1, key), value);

/** "k8s\0" and runtime.Unknown { typeMeta, raw, contentEncoding "" }. */
export function envelope(apiVersion: string, kind: string, raw: Bytes | Buffer): Buffer {
  return Buffer.concat([
    Buffer.from([0x6b, 0x38, 0x73, 0x00]),
    Buffer.from(msg(1, str(1, apiVersion), str(2, kind))),
    Buffer.from([...tag(2, 2), ...varint(raw.length)]),
    Buffer.from(raw),
    Buffer.from(str(3, '')),
  ]);
}

/** A watch frame: a 4-byte big-endian length, then the bytes. */
export function frame(bytes: Bytes | Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(bytes.length);
  return Buffer.concat([head, Buffer.from(bytes)]);
}

/** metav1.WatchEvent { type (1), object (2): RawExtension { raw (1) } }, framed. */
export function watchFrame(type: string, object: Buffer): Buffer {
  return frame([...str(1, type), ...msg(2, len(1, object))]);
}

export interface ConfigMapFields {
  name: string;
  namespace?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  data?: Record<string, string>;
}

/** A v1 ConfigMap's message (no envelope): ObjectMeta (1), data (2). */
export function configMap(fields: ConfigMapFields): Bytes {
  const meta: Bytes[] = [str(1, fields.name)];
  if (fields.namespace) meta.push(str(3, fields.namespace));
  if (fields.resourceVersion) meta.push(str(6, fields.resourceVersion));
  for (const [key, value] of Object.entries(fields.labels ?? {})) meta.push(entry(11, key, str(2, value)));
  return [
    ...msg(1, ...meta),
    ...Object.entries(fields.data ?? {}).flatMap(([key, value]) => entry(2, key, str(2, value))),
  ];
}

/**
 * A scheduling.k8s.io/v1beta1 Workload whose composite pod group templates nest `depth`
 * deep (the one recursive message of the built-in kinds): each level is an array and an
 * object in JSON.
 */
export function deepWorkload(name: string, resourceVersion: string, depth: number): Bytes {
  // Built outside in, each level's length known first: linear in the depth.
  const leaf = str(1, 'leaf');
  const heads: Bytes[] = [];
  const lengths = [leaf.length];
  for (let i = 0; i < depth; i++) {
    const own = str(1, `t${i}`);
    const head = [...own, ...tag(9, 2), ...varint(lengths[i]!)];
    heads.push(head);
    lengths.push(head.length + lengths[i]!);
  }
  const template: Bytes = [];
  for (let i = depth - 1; i >= 0; i--) for (const byte of heads[i]!) template.push(byte);
  for (const byte of leaf) template.push(byte);
  return [...msg(1, str(1, name), str(3, 'ns'), str(6, resourceVersion)), ...msg(2, len(3, template))];
}
