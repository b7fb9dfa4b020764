// Minimal edits of the application's root module source: an import statement and an entry
// in the `imports` array of its @Module. Text edits, not a printer: the rest of the file is
// left byte for byte as the user wrote it. When the shape is not one this recognises, the
// caller prints what to add instead of guessing.

/** The source with the entry added, or why it could not be added. */
export type ModuleEdit = { source: string; changed: boolean } | { error: string };

/**
 * Adds `entry` (e.g. `OperatorModule.forRoot()`) to the `imports: [...]` of the first
 * `@Module({...})` in `source`, and `importLine` at the end of the import block. Unchanged
 * when `present` already occurs in the array (idempotent).
 */
export function addModuleImport(source: string, importLine: string, entry: string, present: RegExp): ModuleEdit {
  const decorator = source.indexOf('@Module(');
  if (decorator < 0) return { error: 'no @Module( decorator in the file' };
  const imports = /imports\s*:\s*\[/g;
  imports.lastIndex = decorator;
  const match = imports.exec(source);
  const objectEnd = closingOf(source, source.indexOf('{', decorator), '{', '}');
  if (!match || objectEnd < 0 || match.index > objectEnd) {
    return { error: 'the @Module has no `imports: [` array' };
  }
  const open = match.index + match[0].length - 1;
  const close = closingOf(source, open, '[', ']');
  if (close < 0) return { error: 'the `imports` array is not closed' };
  const array = source.slice(open + 1, close);
  let out = source;
  let changed = false;
  if (!present.test(array)) {
    // A trailing comment stays after its element: the comma goes before it.
    const tail = /((?:\s+\/\/[^\n]*)?\s*)$/.exec(array)![0];
    const head = array.slice(0, array.length - tail.length);
    const comma = head.trim() === '' || head.trimEnd().endsWith(',') ? '' : ',';
    const indent = /\n([^\S\n]*)\S/.exec(array)?.[1] ?? '';
    const inserted =
      head.trim() === ''
        ? entry
        : array.includes('\n')
          ? `${head}${comma}${tail.replace(/\s*$/, '')}\n${indent}${entry},\n${/\n([^\S\n]*)$/.exec(array)?.[1] ?? ''}`
          : `${head.trim()}${comma} ${entry}`;
    out = `${out.slice(0, open + 1)}${inserted}${out.slice(close)}`;
    changed = true;
  }
  if (!out.includes(importLine)) {
    out = withImport(out, importLine);
    changed = true;
  }
  return { source: out, changed };
}

/** The import line after the last top-level import statement (or first in the file). */
function withImport(source: string, line: string): string {
  const statements = [...source.matchAll(/^import\s[^;]*;[^\S\n]*\n/gm)];
  const last = statements.at(-1);
  if (!last) return `${line}\n${source}`;
  const at = last.index + last[0].length;
  return `${source.slice(0, at)}${line}\n${source.slice(at)}`;
}

/** Index of the bracket closing the one at `open`, skipping strings and comments; -1 if none. */
function closingOf(source: string, open: number, opening: string, closing: string): number {
  if (open < 0) return -1;
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i]!;
    if (c === '"' || c === "'" || c === '`') {
      i = endOfString(source, i, c);
    } else if (c === '/' && source[i + 1] === '/') {
      i = source.indexOf('\n', i);
      if (i < 0) return -1;
    } else if (c === '/' && source[i + 1] === '*') {
      i = source.indexOf('*/', i + 2) + 1;
      if (i <= 0) return -1;
    } else if (c === opening) {
      depth++;
    } else if (c === closing && --depth === 0) {
      return i;
    }
  }
  return -1;
}

function endOfString(source: string, start: number, quote: string): number {
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === quote) return i;
  }
  return source.length;
}
