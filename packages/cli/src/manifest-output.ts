import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, readlink, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { GENERATED_NOTICE, MANIFEST_FOLDERS } from '@nestor/operator/manifests';
import { FolderError, kernelFileSystemOf, makeFolders } from './make-folders.js';

/**
 * What `nestor manifests` wrote at the top of --out before the CRDs, the namespace and
 * the operator had folders of their own. Left in place, that kustomization.yaml would
 * still delete the CRDs and the namespace with the operator.
 */
const FORMER_LAYOUT = ['kustomization.yaml', 'crds.yaml', 'rbac.yaml', 'deployment.yaml'];

/** A path under --out that could not be written, and why; nothing under --out was changed. */
export class ManifestWriteError extends Error {
  override readonly name = 'ManifestWriteError';
  constructor(
    readonly path: string,
    readonly reason: string,
    /** What was left as it was: "nothing in <out> was changed", or "nothing was written". */
    outcome: string,
  ) {
    super(`cannot write ${path}: ${reason}; ${outcome}`);
  }
}

/**
 * Writes the files under `out`, all or none, then removes what an earlier run wrote there
 * and this one does not (a former layout, a namespace/ no longer asked for): only files
 * that say they were generated, so nothing a person wrote is touched. Returns the paths
 * removed.
 *
 * A half-written deploy folder is worse than none: `kubectl apply -k` would install new
 * CRDs beside an old Deployment. So every file is first written to a staging folder on
 * the same file system, where a full disk or a missing right shows up, and only then
 * renamed into place. A new `out` is one rename of the staging folder beside it; an
 * existing one (which may hold files of its own) gets a rename per file, each undone if
 * a later one fails, so on failure its content stays as it was.
 */
export async function writeManifestFiles(
  out: string,
  files: Record<string, string>,
  layout: OutputLayout = KUSTOMIZE_LAYOUT,
): Promise<string[]> {
  const kernel = await kernelFileSystemOf(out);
  if (kernel)
    throw new ManifestWriteError(
      out,
      `it is under ${kernel}, a kernel file system where no folder or file can be made`,
      NOTHING_WRITTEN,
    );
  const existing = await stat(out).catch(() => undefined);
  if (!existing) {
    await writeNew(out, files);
    return [];
  }
  if (!existing.isDirectory()) throw new ManifestWriteError(out, 'it is a file, not a folder', 'nothing was written');
  return replaceIn(out, files, layout);
}

/** Where generated files live under the output folder: the kustomize folders, or a chart's. */
export interface OutputLayout {
  /** The folders of generated files: a generated file there that is not written again is removed. */
  folders: readonly string[];
  /** Files at the top that an earlier layout generated, removed too. */
  formerLayout: readonly string[];
  /** Whether a file's first line says it was generated (default: `nestor manifests`' notice). */
  generated?: (firstLine: string) => boolean;
}

const KUSTOMIZE_LAYOUT: OutputLayout = { folders: MANIFEST_FOLDERS, formerLayout: FORMER_LAYOUT };

const NOTHING_WRITTEN = 'nothing was written';

/** `out` does not exist: the files staged in a folder beside it, renamed to `out` at once. */
async function writeNew(out: string, files: Record<string, string>): Promise<void> {
  const parent = dirname(out);
  let createdParent: string | undefined;
  try {
    createdParent = await makeFolders(parent);
  } catch (error) {
    throw await writeError(error, out, NOTHING_WRITTEN);
  }
  // Beside `out`, so that the rename stays on one file system; hidden, for tools listing the parent.
  const staging = join(parent, `.${basename(out)}.nestor-${randomBytes(4).toString('hex')}`);
  try {
    await stage(staging, files, out, NOTHING_WRITTEN);
    await rename(staging, out).catch(async (error: unknown) => {
      throw await writeError(error, out, NOTHING_WRITTEN);
    });
  } catch (error) {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    if (createdParent) await rm(createdParent, { recursive: true, force: true }).catch(() => undefined);
    throw error;
  }
}

/** `out` exists: each file renamed into place from a staging folder inside it, undone on failure. */
async function replaceIn(out: string, files: Record<string, string>, layout: OutputLayout): Promise<string[]> {
  // Inside `out`, not beside it: the same file system even when `out` is a mount point,
  // and no right needed on its parent.
  const staging = join(out, `.nestor-manifests-${randomBytes(4).toString('hex')}`);
  const undo: (() => Promise<unknown>)[] = [];
  const unchanged = `nothing in ${out} was changed`;
  await refuseLinks(out, files, layout, unchanged);
  try {
    await stage(join(staging, 'new'), files, out, unchanged);
    const removed = await formerlyGenerated(out, files, layout);
    /** Moves what is at `path` aside, into the staging folder, to be put back on failure. */
    const setAside = async (path: string) => {
      const target = join(out, path);
      const info = await lstat(target).catch(() => undefined);
      if (!info) return;
      if (info.isDirectory()) throw new ManifestWriteError(target, 'it is a folder, not a file', unchanged);
      const aside = join(staging, 'old', path);
      await makeFolders(dirname(aside));
      await rename(target, aside);
      undo.push(() => rename(aside, target));
    };
    for (const path of Object.keys(files)) {
      const target = join(out, path);
      try {
        await folderFor(out, dirname(path), undo);
        await setAside(path);
        await rename(join(staging, 'new', path), target);
        undo.push(() => rm(target, { force: true }));
      } catch (error) {
        throw await writeError(error, target, unchanged);
      }
    }
    for (const path of removed) {
      await setAside(path).catch(async (error: unknown) => {
        throw await writeError(error, join(out, path), unchanged);
      });
    }
    undo.length = 0;
    // A folder emptied of what was generated there goes too.
    for (const folder of layout.folders) await rmdir(join(out, folder)).catch(() => undefined);
    return removed;
  } catch (error) {
    for (const step of undo.reverse()) await step().catch(() => undefined);
    throw error;
  } finally {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Writes every file under `folder`: where a full disk or a missing right fails, before anything is replaced. */
async function stage(folder: string, files: Record<string, string>, out: string, outcome: string): Promise<void> {
  try {
    // Two levels for the `new` folder inside a staging folder; the staging folder's name is new.
    await makeFolders(folder);
  } catch (error) {
    throw await writeError(error, out, outcome);
  }
  for (const [path, text] of Object.entries(files)) {
    try {
      await makeFolders(dirname(join(folder, path)));
      await writeFile(join(folder, path), text);
    } catch (error) {
      throw await writeError(error, join(out, path), outcome);
    }
  }
}

/**
 * A symbolic link where a folder of the output must be: the files would go wherever it
 * points (another project, a system folder), and what an earlier run wrote there would be
 * moved out of it. Refused, naming it; the link to `out` itself is the user's choice.
 */
async function refuseLinks(
  out: string,
  files: Record<string, string>,
  layout: OutputLayout,
  outcome: string,
): Promise<void> {
  const folders = new Set<string>(layout.folders);
  for (const path of Object.keys(files)) {
    for (let dir = dirname(path); dir !== '.'; dir = dirname(dir)) folders.add(dir);
  }
  for (const folder of [...folders].sort()) {
    const path = join(out, folder);
    if (!(await lstat(path).catch(() => undefined))?.isSymbolicLink()) continue;
    const target = await readlink(path).catch(() => '?');
    throw new ManifestWriteError(
      path,
      `it is a symbolic link (to ${target}), and nothing is written through a link inside the output folder: ` +
        'remove the link, or give the folder it points to as the output',
      outcome,
    );
  }
}

/** Makes the folders of `relative` under `out` that are missing, each removed again on undo. */
async function folderFor(out: string, relative: string, undo: (() => Promise<unknown>)[]): Promise<void> {
  if (relative === '.') return;
  await folderFor(out, dirname(relative), undo);
  const folder = join(out, relative);
  if (await stat(folder).catch(() => undefined)) return;
  await mkdir(folder);
  undo.push(() => rmdir(folder));
}

/** The files an earlier run generated under `out` that this one does not write. */
async function formerlyGenerated(out: string, files: Record<string, string>, layout: OutputLayout): Promise<string[]> {
  const candidates = [...layout.formerLayout];
  for (const folder of layout.folders) {
    for (const file of await readdir(join(out, folder)).catch(() => [])) candidates.push(`${folder}/${file}`);
  }
  const removed: string[] = [];
  const generated = layout.generated ?? ((line: string) => line.includes(GENERATED_NOTICE));
  for (const path of candidates.filter((p) => !(p in files))) {
    if (await isGenerated(join(out, path), generated)) removed.push(path);
  }
  return removed;
}

async function isGenerated(file: string, generated: (firstLine: string) => boolean): Promise<boolean> {
  const line = (await readFile(file, 'utf8').catch(() => undefined))?.split('\n', 1)[0];
  return line !== undefined && generated(line);
}

/** The error of a failed file system call, as what a person can act on: the path and why. */
async function writeError(error: unknown, path: string, outcome: string): Promise<Error> {
  if (error instanceof ManifestWriteError) return error;
  if (error instanceof FolderError) return new ManifestWriteError(path, error.message, outcome);
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return new ManifestWriteError(path, `permission denied (${code})`, outcome);
    case 'EROFS':
      return new ManifestWriteError(path, 'the file system is read-only (EROFS)', outcome);
    case 'ENOSPC':
    case 'EDQUOT':
      return new ManifestWriteError(path, `no space left on the device (${code})`, outcome);
    case 'EISDIR':
      return new ManifestWriteError(path, 'it is a folder, not a file (EISDIR)', outcome);
    case 'ENOTDIR':
    case 'EEXIST': {
      const file = await fileInTheWay(path);
      if (file) return new ManifestWriteError(path, `${file} is a file, where a folder must be`, outcome);
      break;
    }
    case 'EXDEV':
      return new ManifestWriteError(path, 'it is on another file system than its folder (EXDEV)', outcome);
  }
  return new ManifestWriteError(path, (error as Error).message, outcome);
}

/** The nearest existing path above `path` that is not a folder, if any. */
async function fileInTheWay(path: string): Promise<string | undefined> {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const info = await stat(dir).catch(() => undefined);
    if (info) return info.isDirectory() ? undefined : dir;
    if (dirname(dir) === dir) return undefined;
  }
}
