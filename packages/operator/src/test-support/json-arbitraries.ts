// fast-check arbitraries of JSON as it comes from the wire: objects with Object.prototype and
// keys that name its members (`__proto__`, `constructor`, `toString`), for the properties of
// the code that copies, diffs and merges such objects.
import fc from 'fast-check';

const key = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'a', 'b', 'c'),
  fc.string({ maxLength: 4 }),
);

const arbitraries = fc.letrec<{ value: unknown; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string({ maxLength: 6 }),
    fc.array(tie('value'), { maxLength: 3 }),
    tie('object'),
  ),
  object: fc.dictionary(key, tie('value'), { maxKeys: 4, noNullPrototype: true }),
}));

/** Any JSON value. */
export const jsonValue = arbitraries.value;
/** Any JSON object. */
export const jsonObject = arbitraries.object;

/**
 * `value` without the object fields whose value is null (arrays keep theirs): what a merge
 * patch can produce, as RFC 7386 spells removal null.
 */
export function withoutNullFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNullFields);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [field, inner] of Object.entries(value)) {
    if (inner === null) continue;
    Object.defineProperty(copy, field, {
      value: withoutNullFields(inner),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return copy;
}
