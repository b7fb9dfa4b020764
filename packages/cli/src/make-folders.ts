// Folders made one level at a time, where Node's recursive mkdir can loop forever: under
// /proc, mkdir of a missing folder says ENOENT although its parent exists, and the
// recursive mkdir answers ENOENT by making the parent again, which exists, and retries.
import { mkdir, realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';

/** Kernel file systems: no file or folder can be made there, whatever the rights. */
const KERNEL_FILE_SYSTEMS = ['/proc', '/sys'];

/** Thrown when a folder cannot be made for a reason mkdir does not name. */
export class FolderError extends Error {
  override readonly name = 'FolderError';
}

/**
 * The kernel file system `path` lies in (after following the links of the part that
 * exists), or undefined: an output folder there is refused before anything is tried.
 */
export async function kernelFileSystemOf(path: string): Promise<string | undefined> {
  let existing = path;
  while (!(await stat(existing).catch(() => undefined)) && dirname(existing) !== existing) existing = dirname(existing);
  const real = join(await realpath(existing).catch(() => existing), relative(existing, path));
  return KERNEL_FILE_SYSTEMS.find((root) => real === root || real.startsWith(root + sep));
}

/**
 * mkdir -p, each level made on its own: returns the first folder made (as mkdir's
 * `recursive` does), and fails, naming the folder, where mkdir makes no progress (ENOENT
 * in a parent that exists).
 */
export async function makeFolders(path: string): Promise<string | undefined> {
  const missing: string[] = [];
  for (let dir = path; !(await stat(dir).catch(() => undefined)); dir = dirname(dir)) {
    if (dirname(dir) === dir) break;
    missing.unshift(dir);
  }
  for (const dir of missing) {
    try {
      await mkdir(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code === 'ENOENT' && (await stat(dirname(dir)).catch(() => undefined))?.isDirectory())
        throw new FolderError(`no folder can be made in ${dirname(dir)} (mkdir says ENOENT there, although it exists)`);
      throw error;
    }
  }
  return missing[0];
}
