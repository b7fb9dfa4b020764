// Scaffolding commands plan every change first and write only when all of them can be made,
// so a refusal leaves the project as it was.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';

export interface FileChange {
  path: string;
  content: string;
  /** One line for the command's report: what this change is for. */
  what: string;
}

/** The changes that would alter a file: new files, and existing ones whose content differs. */
export function effective(changes: FileChange[]): FileChange[] {
  return changes.filter((change) => !existsSync(change.path) || readFileSync(change.path, 'utf8') !== change.content);
}

/** Writes the changes and returns the report lines (`created`/`updated` path: what). */
export function apply(root: string, changes: FileChange[]): string[] {
  return changes.map((change) => {
    const verb = existsSync(change.path) ? 'updated' : 'created';
    mkdirSync(dirname(change.path), { recursive: true });
    writeFileSync(change.path, change.content);
    return `  ${verb} ${relative(root, change.path)}: ${change.what}`;
  });
}

/** A package.json as npm writes it: two spaces, a final newline. */
export function packageJsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
