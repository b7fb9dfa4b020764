// What keeps hub -> spoke -> hub lossless: the hub's data a spoke cannot hold, written on the
// spoke as a JSON merge patch (RFC 7386) in one annotation, and applied again on the way
// back (Cluster API's `cluster.x-k8s.io/conversion-data`, computed instead of hand-written).
// Any user who can write the spoke can write the annotation too, and objects come from an
// unauthenticated port: keys are data (`__proto__` included, read and written as own
// properties), and the annotation is bounded in size and depth before anything walks it.
import { MAX_OBJECT_DEPTH } from '@nestor/core';

/**
 * The annotation on a spoke holding the hub's data it lost: a JSON merge patch from what the
 * spoke converts back to, to the hub it came from. Written and read by the converter only.
 */
export const CONVERSION_DATA_ANNOTATION = 'nestor.dev/conversion-data';

/**
 * The largest conversion data kept or restored, in bytes of JSON: far above what a spoke
 * loses in practice, and a bound on the work one object costs. The API server holds all of
 * an object's annotations to 256 KiB.
 */
export const DEFAULT_MAX_CONVERSION_DATA_BYTES = 64 * 1024;

type Data = Record<string, unknown>;

/** The part of an object a conversion changes: all but apiVersion, kind and metadata. */
export function dataOf(object: Data): Data {
  const { apiVersion: _a, kind: _k, metadata: _m, ...data } = object;
  return data;
}

/**
 * The RFC 7386 merge patch that turns `from` into `to`: objects are compared key by key,
 * anything else (arrays included) replaced whole; a key `to` lacks is `null`. Keys whose
 * value is `undefined` count as absent. Undefined when they are equal.
 */
export function mergePatch(from: unknown, to: unknown): unknown {
  if (isPlainObject(from) && isPlainObject(to)) {
    const patch: Data = {};
    let changed = false;
    for (const key of Object.keys(to)) {
      const value = to[key];
      if (value === undefined) continue;
      const before = own(from, key);
      const sub = before === undefined ? value : mergePatch(before, value);
      if (sub !== undefined) {
        setOwn(patch, key, sub);
        changed = true;
      }
    }
    for (const key of Object.keys(from)) {
      if (from[key] !== undefined && own(to, key) === undefined) {
        setOwn(patch, key, null);
        changed = true;
      }
    }
    return changed ? patch : undefined;
  }
  if (jsonEqual(from, to)) return undefined;
  return to === undefined ? null : to;
}

/** RFC 7386: `patch` applied to `target`, without changing either (unchanged parts are shared). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Data = isPlainObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) delete result[key];
    else setOwn(result, key, applyMergePatch(own(result, key), value));
  }
  return result;
}

/**
 * A merge patch split in two, to try each half on its own: the keys of the first object
 * (from the top) that has more than one, halved, each half under the keys leading to it.
 * Undefined for a patch of one change. Costs the depth of that object plus its keys.
 */
export function splitPatch(patch: unknown): [unknown, unknown] | undefined {
  const path: string[] = [];
  let node = patch;
  for (;;) {
    if (!isPlainObject(node)) return undefined;
    const keys = Object.keys(node);
    if (keys.length === 0) return undefined;
    if (keys.length === 1) {
      path.push(keys[0]!);
      node = node[keys[0]!];
      continue;
    }
    const half = Math.ceil(keys.length / 2);
    const part = (chosen: string[]) => {
      const object: Data = {};
      for (const key of chosen) setOwn(object, key, (node as Data)[key]);
      return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), object);
    };
    return [part(keys.slice(0, half)), part(keys.slice(half))];
  }
}

/** Deep equality of JSON values; object keys whose value is `undefined` count as absent. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((value, i) => jsonEqual(value, b[i]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = (o: Data) => Object.keys(o).filter((k) => o[k] !== undefined);
  const aKeys = keys(a);
  return aKeys.length === keys(b).length && aKeys.every((key) => jsonEqual(a[key], own(b, key)));
}

/** Conversion data as read from an object: the patch, or why it was ignored. */
export type ConversionData = { patch: Data } | { ignored: string } | undefined;

/**
 * The conversion data on an object: undefined when it has none; ignored, saying why, when it
 * is larger than `maxBytes`, not a JSON object, or nested deeper than MAX_OBJECT_DEPTH.
 */
export function readConversionData(object: Data, maxBytes = DEFAULT_MAX_CONVERSION_DATA_BYTES): ConversionData {
  const annotations = own(object.metadata, 'annotations');
  const text = own(annotations, CONVERSION_DATA_ANNOTATION);
  if (typeof text !== 'string') return undefined;
  // UTF-8 takes at least one byte per UTF-16 unit: the length rules out most without counting.
  const bytes = text.length > maxBytes ? text.length : Buffer.byteLength(text);
  if (bytes > maxBytes) {
    return { ignored: `its ${CONVERSION_DATA_ANNOTATION} annotation is ${bytes} bytes, over the limit of ${maxBytes}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ignored: `its ${CONVERSION_DATA_ANNOTATION} annotation is not JSON` };
  }
  if (!isPlainObject(value)) return { ignored: `its ${CONVERSION_DATA_ANNOTATION} annotation is not a JSON object` };
  if (nestsDeeperThan(value, MAX_OBJECT_DEPTH)) {
    return {
      ignored: `its ${CONVERSION_DATA_ANNOTATION} annotation nests deeper than ${MAX_OBJECT_DEPTH} levels`,
    };
  }
  return { patch: value };
}

/**
 * Whether objects and arrays nest more than `limit` deep in `value`: a walk with its own
 * stack, so it answers for any depth, before a recursive copy or diff runs out of stack.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  // Two parallel stacks and for-in: no array or tuple per object (wide objects are common).
  const nodes: unknown[] = [value];
  const depths: number[] = [0];
  const visit = (child: unknown, depth: number) => {
    if (typeof child !== 'object' || child === null) return;
    nodes.push(child);
    depths.push(depth);
  };
  while (nodes.length) {
    const node = nodes.pop();
    const depth = depths.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= limit) return true;
    if (Array.isArray(node)) {
      for (const child of node as unknown[]) visit(child, depth + 1);
    } else {
      for (const key in node) visit((node as Data)[key], depth + 1);
    }
  }
  return false;
}

export function isPlainObject(value: unknown): value is Data {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `object[key]` if `object` has it as its own property: never what its prototype has. */
export function own(object: unknown, key: string): unknown {
  return isPlainObject(object) && Object.hasOwn(object, key) ? object[key] : undefined;
}

/** `object[key] = value` as data: `__proto__` becomes a property, not the prototype. */
export function setOwn(object: Data, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}
