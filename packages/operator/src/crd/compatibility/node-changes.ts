// The rules on one schema node's own keywords, old against new, for a field both schemas
// have: what a value that validated before may fail now, or what now reads differently.
// Descriptions, titles and examples are not compared: they change no object.
import type { CompatibilityRule } from './compatibility-rules.js';
import { CrdCompatibilityInputError, type SchemaNode } from './compared-crd.js';
import {
  canonicalJson,
  flag,
  listKeyword,
  numberKeyword,
  shownPath,
  stringKeyword,
  stringsKeyword,
  typeOf,
} from './schema-keywords.js';

/** Records one breaking change at a path. */
export type ChangeSink = (rule: CompatibilityRule, path: string, change: string) => void;

/**
 * Compares the keywords of one node. Returns false when its type changed: that finding says
 * it all, and neither its other keywords nor its children are compared.
 */
export function compareNode(before: SchemaNode, after: SchemaNode, path: string, emit: ChangeSink): boolean {
  const type = typeOf(before, path);
  const next = typeOf(after, path);
  if (type !== next) {
    emit('type-changed', path, `type ${type} -> ${next}`);
    return false;
  }
  const embedded = flag(before, 'x-kubernetes-embedded-resource', path);
  if (embedded !== flag(after, 'x-kubernetes-embedded-resource', path)) {
    emit('type-changed', path, `x-kubernetes-embedded-resource ${embedded} -> ${!embedded}`);
    return false;
  }
  if (
    flag(before, 'x-kubernetes-preserve-unknown-fields', path) &&
    !flag(after, 'x-kubernetes-preserve-unknown-fields', path)
  ) {
    emit('unknown-fields-pruned', path, 'x-kubernetes-preserve-unknown-fields removed');
  }
  if (flag(before, 'nullable', path) && !flag(after, 'nullable', path)) {
    emit('nullable-removed', path, 'nullable removed');
  }
  compareEnum(before, after, path, emit);
  compareLimits(before, after, path, emit);
  comparePatterns(before, after, path, emit);
  compareRules(before, after, path, emit);
  compareDefault(before, after, path, emit);
  compareListTypes(before, after, type, path, emit);
  return true;
}

function compareEnum(before: SchemaNode, after: SchemaNode, path: string, emit: ChangeSink): void {
  const next = listKeyword(after, 'enum', path);
  if (!next) return;
  const values = listKeyword(before, 'enum', path);
  const kept = new Set(next.map(canonicalJson));
  if (!values) {
    emit('enum-narrowed', path, `enum added: ${[...kept].join(', ')}`);
    return;
  }
  const removed = values.map(canonicalJson).filter((value) => !kept.has(value));
  if (removed.length) emit('enum-narrowed', path, `enum values removed: ${removed.join(', ')}`);
}

/** Upper bounds, lower bounds and multipleOf: each added or made stricter. */
function compareLimits(before: SchemaNode, after: SchemaNode, path: string, emit: ChangeSink): void {
  const bound = (which: 'maximum' | 'minimum') => {
    const exclusive = which === 'maximum' ? 'exclusiveMaximum' : 'exclusiveMinimum';
    const old = numberKeyword(before, which, path);
    const now = numberKeyword(after, which, path);
    if (now === undefined) return;
    const oldExclusive = flag(before, exclusive, path);
    const nowExclusive = flag(after, exclusive, path);
    const shown = (value: number | undefined, excluded: boolean) => `${value}${excluded ? ' (exclusive)' : ''}`;
    const stricter =
      old === undefined ||
      (which === 'maximum' ? now < old : now > old) ||
      (now === old && nowExclusive && !oldExclusive);
    if (stricter) {
      emit(
        'limit-tightened',
        path,
        old === undefined
          ? `${which} added: ${shown(now, nowExclusive)}`
          : `${which} ${shown(old, oldExclusive)} -> ${shown(now, nowExclusive)}`,
      );
    }
  };
  bound('maximum');
  bound('minimum');
  for (const key of ['maxLength', 'maxItems', 'maxProperties'] as const) {
    const old = numberKeyword(before, key, path);
    const now = numberKeyword(after, key, path);
    if (now === undefined) continue;
    if (old === undefined) emit('limit-tightened', path, `${key} added: ${now}`);
    else if (now < old) emit('limit-tightened', path, `${key} ${old} -> ${now}`);
  }
  for (const key of ['minLength', 'minItems', 'minProperties'] as const) {
    const old = numberKeyword(before, key, path) ?? 0;
    const now = numberKeyword(after, key, path) ?? 0;
    if (now > old) emit('limit-tightened', path, `${key} ${old} -> ${now}`);
  }
  const multiple = numberKeyword(after, 'multipleOf', path);
  const oldMultiple = numberKeyword(before, 'multipleOf', path);
  // Every multiple of the old divisor is a multiple of the new one only if the new one divides it.
  if (multiple !== undefined && (oldMultiple === undefined || !Number.isInteger(oldMultiple / multiple))) {
    emit(
      'limit-tightened',
      path,
      oldMultiple === undefined ? `multipleOf added: ${multiple}` : `multipleOf ${oldMultiple} -> ${multiple}`,
    );
  }
  if (flag(after, 'uniqueItems', path) && !flag(before, 'uniqueItems', path)) {
    emit('limit-tightened', path, 'uniqueItems added');
  }
  for (const key of ['allOf', 'anyOf', 'oneOf', 'not'] as const) {
    const now = after[key];
    if (now === undefined) continue;
    const old = before[key];
    if (old === undefined) emit('limit-tightened', path, `${key} added`);
    else if (canonicalJson(old) !== canonicalJson(now)) emit('limit-tightened', path, `${key} changed`);
  }
}

/** A pattern or a format added or changed: whether the new one accepts every old value is not decidable here. */
function comparePatterns(before: SchemaNode, after: SchemaNode, path: string, emit: ChangeSink): void {
  for (const key of ['pattern', 'format'] as const) {
    const old = stringKeyword(before, key, path);
    const now = stringKeyword(after, key, path);
    if (now === undefined || now === old) continue;
    emit(
      'pattern-tightened',
      path,
      old === undefined
        ? `${key} added: ${JSON.stringify(now)}`
        : `${key} ${JSON.stringify(old)} -> ${JSON.stringify(now)}`,
    );
  }
}

/** CEL rules (x-kubernetes-validations) the old node did not have; a changed message is no change. */
function compareRules(before: SchemaNode, after: SchemaNode, path: string, emit: ChangeSink): void {
  const next = listKeyword(after, 'x-kubernetes-validations', path);
  if (!next?.length) return;
  const key = (rule: unknown) => {
    const entry = rule as Record<string, unknown> | null;
    if (typeof entry?.rule !== 'string') {
      throw new CrdCompatibilityInputError(`${shownPath(path)}: an x-kubernetes-validations entry has no rule`);
    }
    return canonicalJson({ rule: entry.rule.trim(), optionalOldSelf: entry.optionalOldSelf === true });
  };
  const old = new Set((listKeyword(before, 'x-kubernetes-validations', path) ?? []).map(key));
  for (const rule of next) {
    if (!old.has(key(rule))) emit('cel-rule-added', path, `rule added: ${(rule as { rule: string }).rule.trim()}`);
  }
}

function compareDefault(before: SchemaNode, after: SchemaNode, path: string, emit: ChangeSink): void {
  if (before.default === undefined) return;
  const old = canonicalJson(before.default);
  if (after.default === undefined) emit('default-changed', path, `default removed (was ${old})`);
  else if (canonicalJson(after.default) !== old) {
    emit('default-changed', path, `default ${old} -> ${canonicalJson(after.default)}`);
  }
}

/** x-kubernetes-list-type (absent: atomic), its map keys, x-kubernetes-map-type (absent: granular). */
function compareListTypes(before: SchemaNode, after: SchemaNode, type: string, path: string, emit: ChangeSink): void {
  if (type === 'array') {
    const old = stringKeyword(before, 'x-kubernetes-list-type', path) ?? 'atomic';
    const now = stringKeyword(after, 'x-kubernetes-list-type', path) ?? 'atomic';
    if (old !== now) emit('list-type-changed', path, `x-kubernetes-list-type ${old} -> ${now}`);
    else if (now === 'map') {
      const oldKeys = [...stringsKeyword(before, 'x-kubernetes-list-map-keys', path)].sort().join(', ');
      const nowKeys = [...stringsKeyword(after, 'x-kubernetes-list-map-keys', path)].sort().join(', ');
      if (oldKeys !== nowKeys)
        emit('list-type-changed', path, `x-kubernetes-list-map-keys [${oldKeys}] -> [${nowKeys}]`);
    }
  }
  if (type === 'object') {
    const old = stringKeyword(before, 'x-kubernetes-map-type', path) ?? 'granular';
    const now = stringKeyword(after, 'x-kubernetes-map-type', path) ?? 'granular';
    if (old !== now) emit('list-type-changed', path, `x-kubernetes-map-type ${old} -> ${now}`);
  }
}
