import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireLock, nestorCacheRoot } from './download-cache.js';

/** The Go module that pins helm: packages/testing/helm. */
export const helmModuleDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'helm');

export interface EnsureHelmOptions {
  /** Called with human-readable progress lines while a build runs. */
  onProgress?: (line: string) => void;
  /** Environment to read NESTOR_HELM, GO and the cache root from (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

/** The helm version the Go module requires, read from its go.mod. */
export function helmVersion(moduleDir = helmModuleDir): string {
  const goMod = readFileSync(join(moduleDir, 'go.mod'), 'utf8');
  const match = /^\s*(?:require\s+)?helm\.sh\/helm\/v4 (v\d+\.\d+\.\d+)\s*$/m.exec(goMod);
  if (!match?.[1]) throw new Error(`${moduleDir}/go.mod does not require helm.sh/helm/v4 at a release version`);
  return match[1];
}

/** helm's cache folder, keyed by its version and a hash of go.sum, as the control plane's. */
export function helmCacheDir(moduleDir = helmModuleDir, env = process.env): string {
  const sum = createHash('sha256')
    .update(readFileSync(join(moduleDir, 'go.sum')))
    .digest('hex')
    .slice(0, 12);
  return join(nestorCacheRoot(env), 'helm', `${helmVersion(moduleDir)}-${sum}`);
}

/**
 * The path of a helm binary: NESTOR_HELM when set (it must be executable), else the one
 * built from packages/testing/helm into the cache, built now when missing (a few minutes,
 * once; several processes at once wait for one build). Throws saying why when there is
 * none and Go cannot build it.
 */
export async function ensureHelm(options: EnsureHelmOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const progress = options.onProgress ?? (() => {});
  if (env.NESTOR_HELM) {
    const info = await stat(env.NESTOR_HELM).catch(() => undefined);
    if (!info?.isFile() || (info.mode & 0o111) === 0)
      throw new Error(
        `NESTOR_HELM=${env.NESTOR_HELM} is not an executable file: point it at helm, or unset it to build one`,
      );
    return env.NESTOR_HELM;
  }
  const dir = helmCacheDir(helmModuleDir, env);
  const binary = join(dir, 'helm');
  const complete = join(dir, 'complete');
  if (existsSync(complete)) return binary;
  await mkdir(dir, { recursive: true });
  const release = await acquireLock(join(dir, 'build.lock'), progress, 'building helm');
  try {
    if (existsSync(complete)) return binary;
    const go = env.GO ?? 'go';
    const version = spawnSync(go, ['version'], { encoding: 'utf8' });
    if (version.error || version.status !== 0) {
      throw new Error(
        `Cannot build helm: Go is not installed (running "${go} version" failed). Install Go 1.26 or newer ` +
          `(https://go.dev/doc/install), or set NESTOR_HELM to a helm v4 binary.`,
      );
    }
    const helm = helmVersion();
    progress(`building helm ${helm} with ${version.stdout.trim()} into ${dir} (a few minutes, once)`);
    const staging = join(dir, `staging-${process.pid}`);
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    const started = Date.now();
    await goBuild(go, staging, helm, env);
    await rename(join(staging, 'helm'), binary);
    await rm(staging, { recursive: true, force: true });
    await writeFile(
      complete,
      JSON.stringify({ helm, go: version.stdout.trim(), builtAt: new Date().toISOString() }) + '\n',
    );
    progress(`helm built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return binary;
  } finally {
    await release();
  }
}

function goBuild(go: string, outDir: string, helm: string, env: NodeJS.ProcessEnv): Promise<void> {
  // As helm's Makefile stamps it, so that `helm version` says which it is.
  const ldflags = `-s -w -X helm.sh/helm/v4/internal/version.version=${helm} -X helm.sh/helm/v4/internal/version.gitTreeState=clean`;
  const args = ['build', '-trimpath', `-ldflags=${ldflags}`, '-o', `${outDir}/`, 'helm.sh/helm/v4/cmd/helm'];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(go, args, {
      cwd: helmModuleDir,
      env: { ...env, GOWORK: 'off', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly -buildvcs=false' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let tail = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (tail = (tail + chunk).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolvePromise() : reject(new Error(`go build of helm failed (exit ${code}):\n${tail}`)),
    );
  });
}
