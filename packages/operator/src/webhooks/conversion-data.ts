// What keeps hub -> spoke -> hub lossless: the hub's data a spoke cannot hold, written on the
// spoke as a JSON merge patch (RFC 7386) in one annotation, and applied again on the way
// back (Cluster API's `cluster.x-k8s.io/conversion-data`, computed instead of hand-written).

/**
 * The annotation on a spoke holding the hub's data it lost: a JSON merge patch from what the
 * spoke converts back to, to the hub it came from. Written and read by the converter only.
 */
export const CONVERSION_DATA_ANNOTATION = 'nestor.dev/conversion-data';

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
    for (const [key, value] of Object.entries(to)) {
      if (value === undefined) continue;
      const sub = from[key] === undefined ? value : mergePatch(from[key], value);
      if (sub !== undefined) patch[key] = sub;
    }
    for (const [key, value] of Object.entries(from)) {
      if (value !== undefined && to[key] === undefined) patch[key] = null;
    }
    return Object.keys(patch).length ? patch : undefined;
  }
  if (jsonEqual(from, to)) return undefined;
  return to === undefined ? null : to;
}

/** RFC 7386: `patch` applied to `target`, without changing either (unchanged parts are shared). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Data = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/** A merge patch split into one patch per changed value, to apply them one at a time. */
export function patchLeaves(patch: unknown): unknown[] {
  const leaves: unknown[] = [];
  const walk = (value: unknown, path: string[]) => {
    if (isPlainObject(value) && Object.keys(value).length) {
      for (const [key, sub] of Object.entries(value)) walk(sub, [...path, key]);
      return;
    }
    leaves.push(path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value));
  };
  if (isPlainObject(patch)) walk(patch, []);
  return leaves;
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
  return aKeys.length === keys(b).length && aKeys.every((key) => jsonEqual(a[key], b[key]));
}

/** The conversion data on an object, or undefined when it has none or it is not a JSON object (then ignored). */
export function readConversionData(object: Data): Data | undefined {
  const text = (object.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.[
    CONVERSION_DATA_ANNOTATION
  ];
  if (typeof text !== 'string') return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function isPlainObject(value: unknown): value is Data {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
