// RFC 6902 JSON Patch between two JSON documents: what a defaulting webhook sends back.
// Written here rather than taken from a library: the diff is ~60 lines, the widely used
// differs (fast-json-patch, rfc6902) bring an apply/observe API this never needs, and
// the properties that matter are few and tested (the patch applied to the old document
// gives the new one; no operation for what did not change).

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type JsonPatchOperation =
  | { op: 'add'; path: string; value: JsonValue }
  | { op: 'replace'; path: string; value: JsonValue }
  | { op: 'remove'; path: string };

/**
 * The operations that turn `from` into `to`, applied in order. Objects are compared key by
 * key; arrays element by element over their common length, then the tail is removed (from
 * the end, so indexes stay valid) or appended. A value whose type changes is replaced.
 */
export function jsonPatch(from: unknown, to: unknown): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  diff(from as JsonValue, to as JsonValue, '', operations);
  return operations;
}

/** One segment of a JSON Pointer (RFC 6901): `~` and `/` escaped, in that order. */
export function pointerSegment(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

function diff(from: JsonValue, to: JsonValue, path: string, out: JsonPatchOperation[]): void {
  if (from === to) return;
  if (Array.isArray(from) && Array.isArray(to)) {
    const common = Math.min(from.length, to.length);
    for (let i = 0; i < common; i++) diff(from[i]!, to[i]!, `${path}/${i}`, out);
    for (let i = from.length - 1; i >= common; i--) out.push({ op: 'remove', path: `${path}/${i}` });
    for (let i = common; i < to.length; i++) out.push({ op: 'add', path: `${path}/${i}`, value: to[i]! });
    return;
  }
  if (isObject(from) && isObject(to)) {
    for (const key of Object.keys(from)) {
      if (!Object.hasOwn(to, key) || to[key] === undefined) {
        if (from[key] !== undefined) out.push({ op: 'remove', path: `${path}/${pointerSegment(key)}` });
      }
    }
    for (const [key, value] of Object.entries(to)) {
      if (value === undefined) continue; // as JSON.stringify: an undefined property is absent
      const child = `${path}/${pointerSegment(key)}`;
      if (!Object.hasOwn(from, key) || from[key] === undefined) out.push({ op: 'add', path: child, value });
      else diff(from[key], value, child, out);
    }
    return;
  }
  // A changed primitive, or a change of type (null against an object, an array against one).
  out.push({ op: 'replace', path, value: to });
}

function isObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
