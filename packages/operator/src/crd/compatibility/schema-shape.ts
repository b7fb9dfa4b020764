// Whether two versions' schemas hold objects of the same shape: the same fields with the
// same types, items and map values, and the same pruning. Validation keywords and
// descriptions aside, this is what decides whether an object stored in one version reads
// the same in the other when the API server only changes its apiVersion (no conversion).
import type { SchemaNode } from './compared-crd.js';
import {
  flag,
  itemsPath,
  propertiesOf,
  propertyPath,
  schemaKeyword,
  shownPath,
  typeOf,
  valuesPath,
} from './schema-keywords.js';

const PRUNING = ['x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource'] as const;

/** The first field at which the two schemas' shapes differ, or undefined when they hold the same objects. */
export function shapeDifference(a: SchemaNode, b: SchemaNode, path = ''): string | undefined {
  if (typeOf(a, path) !== typeOf(b, path)) return shownPath(path);
  if (PRUNING.some((key) => flag(a, key, path) !== flag(b, key, path))) return shownPath(path);
  const aProperties = propertiesOf(a, path);
  const bProperties = propertiesOf(b, path);
  for (const [name, child] of aProperties) {
    const other = bProperties.get(name);
    const at = propertyPath(path, name);
    if (!other) return at;
    const found = shapeDifference(child, other, at);
    if (found) return found;
  }
  for (const name of bProperties.keys()) if (!aProperties.has(name)) return propertyPath(path, name);
  for (const [key, at] of [
    ['items', itemsPath(path)],
    ['additionalProperties', valuesPath(path)],
  ] as const) {
    const x = schemaKeyword(a, key, path);
    const y = schemaKeyword(b, key, path);
    if (x === undefined && y === undefined) continue;
    if (x === undefined || y === undefined || x === true || y === true) {
      if (x !== y) return at;
      continue;
    }
    const found = shapeDifference(x, y, at);
    if (found) return found;
  }
  return undefined;
}
