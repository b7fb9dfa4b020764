import type { KubeStatus } from '../errors.js';
import { decodeObject } from './decode-message.js';
import type { ProtobufSchema } from './schema.js';
import { ProtobufDecodeError, WireReader } from './wire-reader.js';

/** What the client asks for: protobuf, else JSON (the server answers JSON for what it cannot encode). */
export const PROTOBUF_ACCEPT = 'application/vnd.kubernetes.protobuf, application/json';
/** The same for a watch: the server answers a stream of length-prefixed frames. */
export const PROTOBUF_WATCH_ACCEPT = 'application/vnd.kubernetes.protobuf;stream=watch, application/json';

/** True for a response in Kubernetes' protobuf (a body, or a watch stream). */
export function isProtobuf(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.startsWith('application/vnd.kubernetes.protobuf');
}

/** Every Kubernetes protobuf body starts with these 4 bytes: "k8s\0". */
const MAGIC = [0x6b, 0x38, 0x73, 0x00] as const;

/** A decoded object: kind and apiVersion first, as Go's JSON writes them. */
export type DecodedObject = { kind: string; apiVersion: string } & Record<string, unknown>;

/** What runtime.Unknown says: the kind, and where its message's bytes are. */
export interface Envelope {
  apiVersion: string;
  kind: string;
  rawStart: number;
  rawEnd: number;
}

/** True when the bytes start with the "k8s\0" magic of an enveloped object. */
export function hasEnvelope(buf: Buffer, start = 0): boolean {
  return (
    buf[start] === MAGIC[0] && buf[start + 1] === MAGIC[1] && buf[start + 2] === MAGIC[2] && buf[start + 3] === MAGIC[3]
  );
}

/**
 * Reads an envelope: the magic, then runtime.Unknown { typeMeta (1) { apiVersion (1),
 * kind (2) }, raw (2), contentEncoding (3), contentType (4) }.
 */
export function readEnvelope(buf: Buffer, start = 0, end = buf.length): Envelope {
  if (end - start < 4 || !hasEnvelope(buf, start)) {
    const first = buf.subarray(start, Math.min(end, start + 4)).toString('hex');
    throw new ProtobufDecodeError(
      `not a Kubernetes protobuf object: it does not start with "k8s\\0" (${end - start} bytes, first ${first})`,
    );
  }
  const reader = new WireReader(buf, start + 4, end);
  const envelope: Envelope = { apiVersion: '', kind: '', rawStart: end, rawEnd: end };
  let contentEncoding = '';
  while (reader.pos < end) {
    const tag = reader.varint();
    switch (tag) {
      case 0x0a: {
        // typeMeta
        const stop = reader.length(end) + reader.pos;
        while (reader.pos < stop) {
          const inner = reader.varint();
          if (inner === 0x0a) envelope.apiVersion = reader.string(reader.length(stop));
          else if (inner === 0x12) envelope.kind = reader.string(reader.length(stop));
          else reader.skip(inner & 7, stop);
        }
        if (reader.pos !== stop) throw reader.truncated('the envelope typeMeta');
        break;
      }
      case 0x12: {
        const length = reader.length(end);
        envelope.rawStart = reader.pos;
        envelope.rawEnd = reader.pos += length;
        break;
      }
      case 0x1a:
        contentEncoding = reader.string(reader.length(end));
        break;
      default:
        reader.skip(tag & 7, end);
    }
  }
  if (reader.pos !== end) throw reader.truncated('the envelope');
  if (contentEncoding) {
    throw new ProtobufDecodeError(`${envelope.kind} came with content encoding ${contentEncoding}, not supported`);
  }
  return envelope;
}

/**
 * Decodes one enveloped object with the schema of the kind its envelope names. The object
 * gets that kind and apiVersion, first, as Go's JSON writes them.
 */
export function decodeEnveloped(schema: ProtobufSchema, buf: Buffer, start = 0, end = buf.length): DecodedObject {
  const { apiVersion, kind, rawStart, rawEnd } = readEnvelope(buf, start, end);
  const spec = schema.message(apiVersion, kind);
  if (!spec) {
    throw new ProtobufDecodeError(
      `no protobuf schema for ${apiVersion} ${kind} (the table is of k8s.io/api ${schema.apiVersion}); ` +
        'turn protobuf off (TransportOptions.protobuf: false) to read it as JSON',
    );
  }
  const object = new spec.Shape() as DecodedObject;
  object.kind = kind;
  object.apiVersion = apiVersion;
  decodeObject(new WireReader(buf, rawStart, rawEnd), rawEnd, spec, object, schema.dropManagedFields);
  return object;
}

/** A page of a LIST: its items (without kind and apiVersion, as in JSON) and ListMeta. */
export interface DecodedList<T> {
  kind: string;
  apiVersion: string;
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[] | null;
}

export function decodeList<T>(schema: ProtobufSchema, body: Buffer): DecodedList<T> {
  return decodeEnveloped(schema, body) as unknown as DecodedList<T>;
}

/**
 * The body of a failed response as KubeApiError reads it: a protobuf Status (the answer to a
 * request that accepted protobuf) decoded, anything else as it is.
 */
export function errorBody(
  body: Buffer,
  contentType: string | undefined,
  schema: ProtobufSchema | undefined,
): Buffer | KubeStatus {
  if (!schema || !isProtobuf(contentType) || !hasEnvelope(body)) return body;
  try {
    return decodeEnveloped(schema, body) as KubeStatus;
  } catch {
    return body;
  }
}
