// `oneOf` and `anyOf` of an object's schema as TypeScript unions, where they can be. In a
// structural schema they only constrain which fields are present (the type of each field is
// the object's own): `oneOf: [{required: [git]}, {required: [s3]}]` is "exactly one of git
// and s3". A branch that says more than which fields it requires (a type, a nested
// junctor, a value it checks) is left to the API server: the union would not be the rule.

type Schema = Record<string, unknown>;

/** Keys a branch may have and still be a list of required fields (`properties` is checked by the API server alone). */
const BRANCH_KEYS = new Set(['required', 'description', 'title', 'properties']);

/**
 * The unions of the node's `oneOf` and `anyOf` (and those of its `allOf` entries), as
 * `(A | B) & (C | D)`, or undefined when there is none it can write. `types` holds each
 * field's type as the object declares it; `key` writes a property name.
 */
export function requiredUnions(
  schema: Schema,
  types: ReadonlyMap<string, string>,
  key: (name: string) => string,
): string | undefined {
  const junctors: Array<['oneOf' | 'anyOf', unknown]> = [];
  for (const node of [schema, ...(Array.isArray(schema.allOf) ? schema.allOf : [])]) {
    if (!isMapping(node)) continue;
    if (node.oneOf !== undefined) junctors.push(['oneOf', node.oneOf]);
    if (node.anyOf !== undefined) junctors.push(['anyOf', node.anyOf]);
  }
  const unions = junctors
    .map(([junctor, branches]) => union(junctor, requiredSets(branches, types), types, key))
    .filter((text): text is string => text !== undefined);
  return unions.length > 0 ? unions.map((text) => `(${text})`).join(' & ') : undefined;
}

/** Each branch's required fields, or undefined when a branch is more than that. */
function requiredSets(branches: unknown, types: ReadonlyMap<string, string>): string[][] | undefined {
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const sets: string[][] = [];
  for (const branch of branches) {
    if (!isMapping(branch) || Object.keys(branch).some((k) => !BRANCH_KEYS.has(k))) return undefined;
    const required = branch.required;
    if (!Array.isArray(required) || required.length === 0) return undefined;
    if (!required.every((name): name is string => typeof name === 'string' && types.has(name))) return undefined;
    sets.push([...new Set(required)].sort());
  }
  return sets;
}

function union(
  junctor: 'oneOf' | 'anyOf',
  sets: string[][] | undefined,
  types: ReadonlyMap<string, string>,
  key: (name: string) => string,
): string | undefined {
  if (!sets) return undefined;
  const branches: string[] = [];
  for (const [i, required] of sets.entries()) {
    const absent = new Set<string>();
    if (junctor === 'oneOf') {
      for (const [j, other] of sets.entries()) {
        if (j === i) continue;
        const missing = other.filter((name) => !required.includes(name));
        // Another branch holding whenever this one does: exactly one can never be said.
        if (missing.length === 0) return undefined;
        // "Not all of them" is a type only when it is one field.
        if (missing.length === 1) absent.add(missing[0]!);
      }
    }
    const members = [
      ...required.map((name) => `${key(name)}: ${types.get(name)!}`),
      ...[...absent].sort().map((name) => `${key(name)}?: never`),
    ];
    const text = `{ ${members.join('; ')} }`;
    if (!branches.includes(text)) branches.push(text);
  }
  return branches.join(' | ');
}

function isMapping(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
