// The write formats the fake applies to its stored objects: JSON merge patch (RFC 7386),
// JSON patch (RFC 6902), and server-side apply approximated without managedFields.
import { isDeepStrictEqual } from 'node:util';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/**
 * What the API server receives of a value a client writes: its JSON. A `Date` becomes its ISO
 * string, `undefined` fields vanish, so that what the fake stores and returns is what a
 * real API server would (a `Date` written never comes back as one).
 */
export function asSent(value: unknown): Json {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386: objects merge key by key, null deletes, everything else (lists too) replaces. */
export function mergePatch(target: unknown, patch: unknown): Json {
  if (!isObject(patch)) return structuredClone(patch) as Json;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** Why a JSON patch cannot apply: the API server answers 422 (a failed `test`) or 400. */
export class JsonPatchError extends Error {
  constructor(
    message: string,
    readonly failedTest: boolean,
  ) {
    super(message);
  }
}

interface Operation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
}

/** RFC 6902, on a copy of `document`. */
export function jsonPatch(document: unknown, operations: unknown): Json {
  if (!Array.isArray(operations)) throw new JsonPatchError('a JSON patch is a list of operations', false);
  let doc = structuredClone(document) as Json;
  for (const operation of operations as Operation[]) {
    const { op, path } = operation;
    switch (op) {
      case 'test': {
        const actual = get(doc, path);
        if (!isDeepStrictEqual(actual, operation.value)) {
          throw new JsonPatchError(`the test of ${path} failed: it is ${JSON.stringify(actual)}`, true);
        }
        break;
      }
      case 'add':
        doc = put(doc, path, structuredClone(operation.value) as Json, 'add');
        break;
      case 'replace':
        if (get(doc, path) === undefined) throw new JsonPatchError(`replace: ${path} does not exist`, false);
        doc = put(doc, path, structuredClone(operation.value) as Json, 'replace');
        break;
      case 'remove':
        doc = remove(doc, path);
        break;
      case 'copy':
      case 'move': {
        const value = get(doc, operation.from ?? '');
        if (value === undefined) throw new JsonPatchError(`${op}: ${operation.from} does not exist`, false);
        if (op === 'move') doc = remove(doc, operation.from!);
        doc = put(doc, path, structuredClone(value), 'add');
        break;
      }
      default:
        throw new JsonPatchError(`unknown JSON patch operation ${JSON.stringify(op)}`, false);
    }
  }
  return doc;
}

function tokens(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new JsonPatchError(`"${path}" is not a JSON pointer`, false);
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function get(doc: Json, path: string): Json | undefined {
  let node: Json | undefined = doc;
  for (const token of tokens(path)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else return undefined;
  }
  return node;
}

function parentOf(doc: Json, path: string): { parent: Json | undefined; key: string } {
  const parts = tokens(path);
  if (parts.length === 0) throw new JsonPatchError('the whole document cannot be the target here', false);
  const key = parts.pop()!;
  const parentPath = parts.map((t) => '/' + t.replaceAll('~', '~0').replaceAll('/', '~1')).join('');
  return { parent: get(doc, parentPath), key };
}

function put(doc: Json, path: string, value: Json, mode: 'add' | 'replace'): Json {
  if (path === '') return value;
  const { parent, key } = parentOf(doc, path);
  if (Array.isArray(parent)) {
    const index = key === '-' ? parent.length : Number(key);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) {
      throw new JsonPatchError(`${path}: index out of range`, false);
    }
    if (mode === 'add') parent.splice(index, 0, value);
    else parent[index] = value;
  } else if (isObject(parent)) {
    parent[key] = value;
  } else {
    throw new JsonPatchError(`${path}: the parent does not exist`, false);
  }
  return doc;
}

function remove(doc: Json, path: string): Json {
  const { parent, key } = parentOf(doc, path);
  if (Array.isArray(parent) && Number(key) < parent.length) parent.splice(Number(key), 1);
  else if (isObject(parent) && key in parent) delete parent[key];
  else throw new JsonPatchError(`remove: ${path} does not exist`, false);
  return doc;
}

/**
 * Server-side apply without managedFields: the applied fields are merged into the object
 * (maps key by key, lists and scalars replaced whole), and fields this field manager applied
 * last time but leaves out now are removed, which is what ownership does for a sole owner.
 * Lists with merge keys (containers by name) are not merged with other managers' entries.
 */
export function applyMerge(current: unknown, applied: unknown, previous: unknown): Json {
  if (!isObject(applied) || !isObject(current)) return structuredClone(applied) as Json;
  const result: JsonObject = { ...current };
  for (const [key, value] of Object.entries(applied)) {
    result[key] = applyMerge(current[key], value, isObject(previous) ? previous[key] : undefined);
  }
  if (isObject(previous)) {
    for (const key of Object.keys(previous)) if (!(key in applied)) delete result[key];
  }
  return result;
}
