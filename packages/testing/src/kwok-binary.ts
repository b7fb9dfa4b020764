import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireLock, nestorCacheRoot } from './download-cache.js';
import { runGo } from './go-command.js';

/** The kwok release the fake nodes run (its stages in kwok-stages.ts come from the same tag). */
export const KWOK_VERSION = 'v0.8.0';

export interface KwokBinaryOptions {
  env?: NodeJS.ProcessEnv;
  onProgress?: (line: string) => void;
}

/** The cache folder of one kwok release: ~/.cache/nestor/kwok/<version>. */
export function kwokCacheDir(env: NodeJS.ProcessEnv = process.env, version = KWOK_VERSION): string {
  return join(nestorCacheRoot(env), 'kwok', version);
}

/**
 * The kwok binary: TEST_ASSET_KWOK when set, else built once into the cache with
 * `go install sigs.k8s.io/kwok/cmd/kwok@<version>` (the module proxy and checksum database
 * pin it; about 3 to 4 minutes on 2 cores). Safe to call from several processes at once.
 */
export async function ensureKwok(options: KwokBinaryOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const progress = options.onProgress ?? (() => {});
  const given = env.TEST_ASSET_KWOK;
  if (given) {
    const info = await stat(given).catch(() => undefined);
    if (!info?.isFile() || (info.mode & 0o111) === 0) {
      throw new Error(
        `kwok not usable at ${given} (from TEST_ASSET_KWOK): not an executable file. Point it at a kwok ` +
          `binary, or unset it to let Nestor build kwok ${KWOK_VERSION} (npm run controlplane -- --nodes).`,
      );
    }
    return given;
  }
  const dir = kwokCacheDir(env);
  const binary = join(dir, 'kwok');
  const complete = join(dir, 'complete');
  if (existsSync(complete) && existsSync(binary)) return binary;

  await mkdir(dir, { recursive: true });
  const release = await acquireLock(join(dir, 'build.lock'), progress, 'building kwok');
  try {
    if (existsSync(complete) && existsSync(binary)) return binary;
    const go = env.GO ?? 'go';
    const version = spawnSync(go, ['version'], { encoding: 'utf8' });
    if (version.error || version.status !== 0) {
      throw new Error(
        `Cannot build kwok for fake nodes: Go is not installed (running "${go} version" failed). ` +
          `Install Go 1.26 or newer (https://go.dev/doc/install), or set TEST_ASSET_KWOK to a kwok ${KWOK_VERSION} binary.`,
      );
    }
    progress(
      `building kwok ${KWOK_VERSION} with ${version.stdout.trim()} into ${dir} (about 4 minutes on 2 cores, once)`,
    );
    const staging = join(dir, `staging-${process.pid}`);
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    const started = Date.now();
    await runGo(go, ['install', '-v', '-trimpath', '-ldflags=-s -w', `sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}`], {
      cwd: staging,
      // Outside any module: `go install pkg@version` builds with kwok's own go.mod and go.sum.
      env: { ...env, GOWORK: 'off', GOBIN: staging, CGO_ENABLED: '0', GOFLAGS: '' },
      progress,
      what: `go install of kwok ${KWOK_VERSION}`,
    });
    await rename(join(staging, 'kwok'), binary);
    await rm(staging, { recursive: true, force: true });
    await writeFile(
      complete,
      JSON.stringify({ kwok: KWOK_VERSION, go: version.stdout.trim(), builtAt: new Date().toISOString() }) + '\n',
    );
    progress(`kwok built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return binary;
  } finally {
    await release();
  }
}
