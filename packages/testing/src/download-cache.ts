import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { sleep } from '@nestor/core';

// The cache of downloaded and built binaries (envtest's archives, kwok, helm, a control plane
// built from source), shared by every test process of the machine.

/** Nestor's cache folder: $NESTOR_CACHE_DIR, else $XDG_CACHE_HOME/nestor, else ~/.cache/nestor. */
export function nestorCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.NESTOR_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'nestor');
}

/**
 * A lock file holding the owner's pid, for work in the shared cache that several test
 * processes may start at once (a build, a download); a lock left by a dead process is
 * taken over. Returns the release.
 */
export async function acquireLock(
  path: string,
  progress: (line: string) => void,
  what = 'building the control plane',
): Promise<() => Promise<void>> {
  let announced = false;
  for (;;) {
    try {
      await writeFile(path, String(process.pid), { flag: 'wx' });
      return () => rm(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(await readFile(path, 'utf8').catch(() => ''));
    const age = Date.now() - ((await stat(path).catch(() => undefined))?.mtimeMs ?? 0);
    // An empty file is a lock being written right now, unless it has been empty for long.
    if ((owner && !isAlive(owner)) || (!owner && age > 5000)) {
      await rm(path, { force: true });
      continue;
    }
    if (owner && !announced) {
      progress(`another process (pid ${owner}) is ${what}; waiting for it`);
      announced = true;
    }
    await sleep(1000);
  }
}

/** Whether a process with this pid runs (EPERM: it runs as another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
