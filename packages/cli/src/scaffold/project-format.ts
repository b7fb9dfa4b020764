// What init and create api write, formatted by the project's own Prettier (its version, its
// configuration), so the starter's `npm run format` and `npm run lint` (eslint-plugin-prettier
// in Nest 11's) pass on them: a template cannot know the project's print width, and a kind's
// name changes where lines break. A file the scaffolding only edits is formatted only when it
// was formatted before, so a file of the user's is never reformatted as a whole.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FileChange } from './file-changes.js';

/** The part of Prettier's API used here (the same in Prettier 2 and 3, sync or async). */
interface Prettier {
  format(source: string, options: Record<string, unknown>): string | Promise<string>;
  check(source: string, options: Record<string, unknown>): boolean | Promise<boolean>;
  resolveConfig(file: string): Record<string, unknown> | null | Promise<Record<string, unknown> | null>;
  getFileInfo(
    file: string,
    options: { ignorePath?: string },
  ): { ignored: boolean; inferredParser: string | null } | Promise<{ ignored: boolean; inferredParser: string | null }>;
}

/** npm writes package.json its own way; the rest Prettier may format. */
const NOT_FORMATTED = new Set(['package.json', 'package-lock.json']);

/**
 * The changes with their content as the project's Prettier formats it; as they are when the
 * project has no Prettier installed, or for a file Prettier ignores or cannot parse.
 * `whole`: the paths whose content the scaffolding wrote entirely (new files, a starter's
 * file replaced); any other existing file is formatted only if its current text is.
 */
export async function formatLikeProject(
  root: string,
  changes: FileChange[],
  whole: (change: FileChange) => boolean,
): Promise<FileChange[]> {
  const prettier = await projectPrettier(root);
  if (!prettier) return changes;
  const ignorePath = join(root, '.prettierignore');
  return Promise.all(
    changes.map(async (change) => {
      if (NOT_FORMATTED.has(basename(change.path))) return change;
      try {
        const info = await prettier.getFileInfo(change.path, existsSync(ignorePath) ? { ignorePath } : {});
        if (info.ignored || !info.inferredParser) return change;
        const options = { ...(await prettier.resolveConfig(change.path)), filepath: change.path };
        if (existsSync(change.path) && !whole(change)) {
          if (!(await prettier.check(readFileSync(change.path, 'utf8'), options))) return change;
        }
        return { ...change, content: await prettier.format(change.content, options) };
      } catch {
        // A parse error or a broken configuration: the text as written, which compiles.
        return change;
      }
    }),
  );
}

/** The project's own Prettier, resolved from its folder; undefined when it has none. */
async function projectPrettier(root: string): Promise<Prettier | undefined> {
  let entry: string;
  try {
    entry = createRequire(join(root, 'package.json')).resolve('prettier');
  } catch {
    return undefined;
  }
  try {
    const loaded = (await import(pathToFileURL(entry).href)) as Prettier & { default?: Prettier };
    const prettier = loaded.default ?? loaded;
    return typeof prettier.format === 'function' ? prettier : undefined;
  } catch {
    return undefined;
  }
}
