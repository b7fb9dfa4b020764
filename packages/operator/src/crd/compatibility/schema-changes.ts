// The rules on one version's schema, old against new (the same version in both CRDs): the
// node's own keywords (node-changes.ts), then what changed between it and its children:
// fields removed, fields made required, and the same comparison down every field both have.
import type { SchemaNode } from './compared-crd.js';
import { compareNode, type ChangeSink } from './node-changes.js';
import {
  flag,
  itemsPath,
  propertiesOf,
  propertyPath,
  schemaKeyword,
  stringsKeyword,
  valuesPath,
} from './schema-keywords.js';

/** Every breaking change from one schema to the next, down to the deepest field both have. */
export function compareSchemas(before: SchemaNode, after: SchemaNode, emit: ChangeSink): void {
  walk(before, after, '', emit);
}

function walk(before: SchemaNode, after: SchemaNode, path: string, emit: ChangeSink): void {
  if (!compareNode(before, after, path, emit)) return;
  const oldProperties = propertiesOf(before, path);
  const newProperties = propertiesOf(after, path);
  const values = schemaKeyword(after, 'additionalProperties', path);
  const preserves = flag(after, 'x-kubernetes-preserve-unknown-fields', path);
  for (const [name, child] of oldProperties) {
    const next = newProperties.get(name);
    if (next) walk(child, next, propertyPath(path, name), emit);
    // A map's values or preserved unknown fields keep what the property held: nothing is pruned.
    else if (!values && !preserves) emit('field-removed', propertyPath(path, name), 'field removed');
  }
  const required = new Set(stringsKeyword(before, 'required', path));
  for (const name of stringsKeyword(after, 'required', path)) {
    // A default fills the field in objects that lack it, on every read and write: none is refused.
    if (required.has(name) || newProperties.get(name)?.default !== undefined) continue;
    emit(
      'required-added',
      propertyPath(path, name),
      oldProperties.has(name) ? 'made required, without a default' : 'new required field without a default',
    );
  }
  const items = schemaKeyword(before, 'items', path);
  const nextItems = schemaKeyword(after, 'items', path);
  if (items && items !== true && nextItems && nextItems !== true) walk(items, nextItems, itemsPath(path), emit);
  const oldValues = schemaKeyword(before, 'additionalProperties', path);
  if (!oldValues) return;
  if (!values) {
    if (!preserves) emit('field-removed', valuesPath(path), 'map values (additionalProperties) removed');
  } else if (oldValues !== true && values !== true) {
    walk(oldValues, values, valuesPath(path), emit);
  } else if (oldValues === true && values !== true) {
    emit('type-changed', valuesPath(path), 'additionalProperties: true -> a schema the values must match');
  }
}
