import {
  BOOL,
  BYTES,
  DOUBLE,
  DURATION,
  INT32,
  INT64,
  INT_OR_STRING,
  MAP,
  MESSAGE,
  MICRO_TIME,
  QUANTITY,
  RAW_JSON,
  STRING,
  STRINGS,
  TIME,
  UINT32,
  UINT64,
  type FieldSpec,
  type MessageSpec,
} from './schema.js';
import { MAX_OBJECT_DEPTH } from '../defaults.js';
import { ObjectTooDeepError, refusedObject } from '../object-depth.js';
import { LENGTH_DELIMITED, ProtobufDecodeError, VARINT, type WireReader } from './wire-reader.js';

type JsonObject = Record<string, unknown>;

/** Set for one synchronous decode (decodeObject): skip ObjectMeta.managedFields. */
let dropManagedFields = false;
/** How deep the JSON being built nests at the message being read (objects and arrays). */
let depth = 0;

/** Thrown where the nesting passes the limit; decodeObject names the object. */
class TooDeep extends Error {}

/**
 * Decodes a message as decodeMessage does, with managedFields skipped when `drop`. An
 * object nested deeper than MAX_OBJECT_DEPTH is an ObjectTooDeepError naming it: its
 * metadata, field 1 of every kind, was read first. The reader is then at `end`, so a list
 * or stream can go on past it. (The one recursive message of the built-in kinds is
 * Workload's composite pod group templates: validation allows two levels, but the API
 * server serves whatever etcd holds.)
 */
export function decodeObject(
  reader: WireReader,
  end: number,
  spec: MessageSpec,
  target: JsonObject,
  drop: boolean,
): void {
  dropManagedFields = drop;
  depth = 0;
  try {
    decodeMessage(reader, end, spec, target);
  } catch (error) {
    if (!(error instanceof TooDeep)) throw error;
    reader.pos = end;
    throw new ObjectTooDeepError(refusedObject(target));
  } finally {
    dropManagedFields = false;
  }
}

/**
 * Decodes the message between the reader's position and `end` into `target`, as the API
 * server's JSON shows the same object: JSON names, omitempty honoured, zero values Go writes
 * filled in, times, quantities and int-or-strings as their JSON. Unknown fields are skipped.
 */
export function decodeMessage(reader: WireReader, end: number, spec: MessageSpec, target: JsonObject): void {
  if (++depth + spec.zeroDepth > MAX_OBJECT_DEPTH) throw new TooDeep();
  const fields = spec.fields;
  while (reader.pos < end) {
    const tag = reader.varint();
    const field = fields[tag >>> 3];
    const wire = tag & 7;
    if (field === undefined) {
      if (tag >>> 3 === 0) throw reader.corrupt(`field number 0 in ${spec.name}`);
      reader.skip(wire, end);
      continue;
    }
    if (wire !== field.wire) {
      if (wire === LENGTH_DELIMITED && field.repeated) {
        readPacked(reader, end, field, target);
        continue;
      }
      throw reader.corrupt(`${spec.name}.${field.json} has wire type ${wire}, expected ${field.wire}`);
    }
    if (field.repeated) {
      if (field.managedFields && dropManagedFields) {
        reader.skip(wire, end);
        continue;
      }
      depth++; // the array
      const value = readValue(reader, end, field.type, field.message);
      depth--;
      const list = target[field.json] as unknown[] | undefined;
      if (list === undefined) target[field.json] = [value];
      else list.push(value);
    } else if (field.type === MAP) {
      readMapEntry(reader, end, field, target);
    } else if (field.inline) {
      const length = reader.length(end);
      depth--; // its fields are the parent's
      decodeMessage(reader, reader.pos + length, field.message!, target);
      depth++;
    } else {
      const value = readValue(reader, end, field.type, field.message);
      if (field.omitEmpty ? value === '' || value === 0 || value === false : field.omitZero && value === null) continue;
      target[field.json] = value;
    }
  }
  if (reader.pos !== end) throw reader.truncated(`the last field of ${spec.name}`);
  const always = spec.always;
  for (let i = 0; i < always.length; i++) {
    const { json, zero } = always[i]!;
    if (target[json] === undefined) target[json] = zero();
  }
  depth--;
}

function readValue(reader: WireReader, end: number, type: number, message: MessageSpec | undefined): unknown {
  switch (type) {
    case STRING:
      return reader.string(reader.length(end));
    case MESSAGE: {
      const length = reader.length(end);
      const object = new message!.Shape();
      decodeMessage(reader, reader.pos + length, message!, object);
      return object;
    }
    case BOOL:
      return reader.varint() !== 0;
    case INT32:
      return reader.int32();
    case INT64:
      return reader.int64();
    case UINT32:
      return reader.uint64() % 2 ** 32;
    case UINT64:
      return reader.uint64();
    case DOUBLE:
      return reader.double();
    case BYTES:
      return reader.base64(reader.length(end));
    case TIME:
    case MICRO_TIME:
      return readTime(reader, end, type === MICRO_TIME);
    case QUANTITY:
      return readWrapped(reader, end, STRING) ?? '0';
    case INT_OR_STRING:
      return readIntOrString(reader, end);
    case RAW_JSON:
      return readRawJson(reader, end);
    case STRINGS:
      return readStrings(reader, end);
    case DURATION:
      return formatDuration((readWrapped(reader, end, INT64) as number | undefined) ?? 0);
    default:
      throw new ProtobufDecodeError(`the protobuf schema has a field of unknown type ${type}`);
  }
}

/** A repeated scalar sent packed: one length-delimited run of values. */
function readPacked(reader: WireReader, end: number, field: FieldSpec, target: JsonObject): void {
  const length = reader.length(end);
  const stop = reader.pos + length;
  let list = target[field.json] as unknown[] | undefined;
  if (list === undefined) target[field.json] = list = [];
  while (reader.pos < stop) list.push(readValue(reader, stop, field.type, undefined));
  if (reader.pos !== stop) throw reader.truncated(`a packed ${field.json}`);
}

/** A map entry: key (1) and value (2); Go's JSON writes map keys sorted, as the wire has them. */
function readMapEntry(reader: WireReader, end: number, field: FieldSpec, target: JsonObject): void {
  const stop = reader.length(end) + reader.pos;
  let key = '';
  let value: unknown;
  while (reader.pos < stop) {
    const tag = reader.varint();
    if (tag === 0x0a) key = reader.string(reader.length(stop));
    else if (tag >>> 3 === 2) {
      depth++; // the map
      value = readValue(reader, stop, field.mapValue, field.message);
      depth--;
    } else reader.skip(tag & 7, stop);
  }
  if (reader.pos !== stop) throw reader.truncated(`an entry of ${field.json}`);
  let map = target[field.json] as JsonObject | undefined;
  if (map === undefined) target[field.json] = map = new field.MapShape!();
  setData(map, key, value ?? zeroOfMapValue(field));
}

/**
 * Sets a key from the wire as an own data property, as JSON.parse does: assigning
 * `__proto__` (a valid ConfigMap key, or a field of a custom resource) would set the
 * object's prototype instead, or do nothing.
 */
export function setData(target: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else target[key] = value;
}

function zeroOfMapValue(field: FieldSpec): unknown {
  switch (field.mapValue) {
    case STRING:
    case BYTES:
      return '';
    case QUANTITY:
      return '0';
    case MESSAGE: {
      const object: JsonObject = {};
      for (const { json, zero } of field.message!.always) object[json] = zero();
      return object;
    }
    default:
      return null;
  }
}

/** A message whose field 1 is the whole value (Quantity's string, Duration's nanoseconds). */
function readWrapped(reader: WireReader, end: number, type: number): unknown {
  const stop = reader.length(end) + reader.pos;
  let value: unknown;
  while (reader.pos < stop) {
    const tag = reader.varint();
    if (tag >>> 3 === 1 && (tag & 7) === (type === STRING ? LENGTH_DELIMITED : VARINT)) {
      value = type === STRING ? reader.string(reader.length(stop)) : reader.int64();
    } else reader.skip(tag & 7, stop);
  }
  if (reader.pos !== stop) throw reader.truncated('a wrapped value');
  return value;
}

let lastSeconds = NaN;
let lastTime = '';

/**
 * metav1.Time (seconds, as RFC 3339 in UTC) or MicroTime (6 fraction digits). An empty
 * message is Go's zero time, which its JSON writes as null.
 */
function readTime(reader: WireReader, end: number, micro: boolean): string | null {
  const length = reader.length(end);
  if (length === 0) return null;
  const stop = reader.pos + length;
  let seconds = 0;
  let nanos = 0;
  while (reader.pos < stop) {
    const tag = reader.varint();
    if (tag === 0x08) seconds = reader.int64();
    else if (tag === 0x10) nanos = reader.int32();
    else reader.skip(tag & 7, stop);
  }
  if (reader.pos !== stop) throw reader.truncated('a timestamp');
  // Go's times run from year 1 to 9999; a Date holds ±8.64e15 ms.
  if (!(seconds >= -62_135_596_800 && seconds <= 253_402_300_799)) throw reader.corrupt(`a time of ${seconds} seconds`);
  if (!micro) {
    // Objects listed together mostly share their creation second.
    if (seconds !== lastSeconds) {
      lastTime = new Date(seconds * 1000).toISOString().slice(0, 19) + 'Z';
      lastSeconds = seconds;
    }
    return lastTime;
  }
  const fraction = String(Math.floor(nanos / 1000)).padStart(6, '0');
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${fraction}Z`;
}

/** intstr.IntOrString: type (1) 0 = intVal (2), 1 = strVal (3). */
function readIntOrString(reader: WireReader, end: number): number | string {
  const stop = reader.length(end) + reader.pos;
  let type = 0;
  let intVal = 0;
  let strVal = '';
  while (reader.pos < stop) {
    const tag = reader.varint();
    if (tag === 0x08) type = reader.int64();
    else if (tag === 0x10) intVal = reader.int32();
    else if (tag === 0x1a) strVal = reader.string(reader.length(stop));
    else reader.skip(tag & 7, stop);
  }
  if (reader.pos !== stop) throw reader.truncated('an IntOrString');
  return type === 1 ? strVal : intVal;
}

/** RawExtension, FieldsV1: raw (1) holds JSON, embedded as is; none is null. */
function readRawJson(reader: WireReader, end: number): unknown {
  const stop = reader.length(end) + reader.pos;
  let value: unknown = null;
  while (reader.pos < stop) {
    const tag = reader.varint();
    if (tag === 0x0a) {
      const length = reader.length(stop);
      const start = reader.pos;
      reader.pos += length;
      if (length > 0) value = parseEmbeddedJson(reader.buf, start, reader.pos);
    } else reader.skip(tag & 7, stop);
  }
  if (reader.pos !== stop) throw reader.truncated('a raw extension');
  return value;
}

function parseEmbeddedJson(buf: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(buf.toString('utf8', start, end));
  } catch (error) {
    throw new ProtobufDecodeError(
      `an embedded object (RawExtension) is not JSON: ${(error as Error).message}; ` +
        'turn protobuf off (TransportOptions.protobuf: false) to read this kind as JSON',
    );
  }
}

/** A named []string the proto wraps in a message: items (1). */
function readStrings(reader: WireReader, end: number): string[] | null {
  const stop = reader.length(end) + reader.pos;
  let items: string[] | null = null;
  while (reader.pos < stop) {
    const tag = reader.varint();
    if (tag === 0x0a) (items ??= []).push(reader.string(reader.length(stop)));
    else reader.skip(tag & 7, stop);
  }
  if (reader.pos !== stop) throw reader.truncated('a string list');
  return items;
}

/** Go's time.Duration.String(): "1h2m3.5s", "1.5ms", "0s". */
export function formatDuration(nanoseconds: number): string {
  if (nanoseconds === 0) return '0s';
  const sign = nanoseconds < 0 ? '-' : '';
  let ns = Math.abs(nanoseconds);
  if (ns < 1e9) {
    const [unit, size] = ns < 1e3 ? ['ns', 1] : ns < 1e6 ? ['µs', 1e3] : ['ms', 1e6];
    return `${sign}${trimFraction(ns / size)}${unit}`;
  }
  const hours = Math.floor(ns / 3.6e12);
  ns -= hours * 3.6e12;
  const minutes = Math.floor(ns / 6e10);
  ns -= minutes * 6e10;
  const seconds = `${trimFraction(ns / 1e9)}s`;
  if (hours) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes) return `${sign}${minutes}m${seconds}`;
  return `${sign}${seconds}`;
}

function trimFraction(value: number): string {
  return value.toFixed(9).replace(/\.?0+$/, '');
}
