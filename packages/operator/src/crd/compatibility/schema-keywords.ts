// Reading a schema node's keywords for the compatibility check: each one checked for the
// type the check compares (a CRD from another tool may hold anything), the paths of fields
// written as the findings name them, and values compared as canonical JSON.
import { CrdCompatibilityInputError, isMapping, type SchemaNode } from './compared-crd.js';

/** The path of a property: `.spec.replicas`, or `.metadata['a.b']` for a name that is not a plain word. */
export function propertyPath(path: string, name: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(name) ? `${path}.${name}` : `${path}['${name.replace(/'/g, "\\'")}']`;
}

/** The path of an array's items: `.spec.ports[*]`. */
export function itemsPath(path: string): string {
  return `${path}[*]`;
}

/** The path of a map's values (additionalProperties): `.spec.labels.*`. */
export function valuesPath(path: string): string {
  return `${path}.*`;
}

/** The path as findings show it: the root of the object is `.`. */
export function shownPath(path: string): string {
  return path === '' ? '.' : path;
}

/** What a node holds: its type, `int-or-string`, or `any` (an untyped node under preserveUnknownFields). */
export function typeOf(node: SchemaNode, at: string): string {
  if (node['x-kubernetes-int-or-string'] === true) return 'int-or-string';
  const type = node.type;
  if (type === undefined) return 'any';
  if (typeof type !== 'string') throw keywordError(at, 'type', 'a type name');
  return type;
}

export function numberKeyword(node: SchemaNode, key: string, at: string): number | undefined {
  const value = node[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw keywordError(at, key, 'a number');
  return value;
}

export function stringKeyword(node: SchemaNode, key: string, at: string): string | undefined {
  const value = node[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw keywordError(at, key, 'a string');
  return value;
}

export function flag(node: SchemaNode, key: string, at: string): boolean {
  const value = node[key];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw keywordError(at, key, 'true or false');
  return value;
}

/** `properties`: each property's node, by name. */
export function propertiesOf(node: SchemaNode, at: string): ReadonlyMap<string, SchemaNode> {
  const properties = node.properties;
  if (properties === undefined) return new Map();
  if (!isMapping(properties)) throw keywordError(at, 'properties', 'a mapping of schemas');
  const found = new Map<string, SchemaNode>();
  for (const [name, child] of Object.entries(properties)) {
    if (!isMapping(child)) throw keywordError(propertyPath(at, name), 'its schema', 'a mapping');
    found.set(name, child);
  }
  return found;
}

/** A keyword that holds one schema (`items`, `not`); `additionalProperties: true` is `true`. */
export function schemaKeyword(node: SchemaNode, key: string, at: string): SchemaNode | true | undefined {
  const value = node[key];
  if (value === undefined || value === false) return undefined;
  if (value === true) return true;
  if (!isMapping(value)) throw keywordError(at, key, 'a schema');
  return value;
}

/** A list of strings (`required`, `x-kubernetes-list-map-keys`). */
export function stringsKeyword(node: SchemaNode, key: string, at: string): readonly string[] {
  const value = node[key];
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw keywordError(at, key, 'a list of strings');
  }
  return value as string[];
}

/** A list (`enum`, `x-kubernetes-validations`, `allOf`): its items as they are. */
export function listKeyword(node: SchemaNode, key: string, at: string): readonly unknown[] | undefined {
  const value = node[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw keywordError(at, key, 'a list');
  return value;
}

/** JSON with every object's keys sorted: equal values give equal strings, whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isMapping(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function keywordError(at: string, key: string, expected: string): CrdCompatibilityInputError {
  return new CrdCompatibilityInputError(`${shownPath(at)}: ${key} is not ${expected}`);
}
