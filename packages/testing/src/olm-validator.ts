import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireLock, nestorCacheRoot } from './download-cache.js';
import { runGo } from './go-command.js';

// operator-framework's bundle validators as a command, for the tests of `nestor manifests
// --olm`: packages/testing/olm (a Go module pinning github.com/operator-framework/api) built
// once into Nestor's cache, as helm is.

/** The Go module of the checker: packages/testing/olm. */
export const olmValidatorModuleDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'olm');

/** The operator-framework/api version the checker's go.mod requires. */
export function olmApiVersion(moduleDir = olmValidatorModuleDir): string {
  const goMod = readFileSync(join(moduleDir, 'go.mod'), 'utf8');
  const match = /^\s*(?:require\s+)?github\.com\/operator-framework\/api (v\d+\.\d+\.\d+)\s*$/m.exec(goMod);
  if (!match?.[1]) throw new Error(`${moduleDir}/go.mod does not require github.com/operator-framework/api`);
  return match[1];
}

/** The checker's cache folder, keyed by the API's version and a hash of its sources and go.sum. */
export function olmValidatorCacheDir(moduleDir = olmValidatorModuleDir, env = process.env): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(file).update(readFileSync(join(moduleDir, file)));
  return join(nestorCacheRoot(env), 'olm-validate', `${olmApiVersion(moduleDir)}-${hash.digest('hex').slice(0, 12)}`);
}

export interface EnsureOlmValidatorOptions {
  onProgress?: (line: string) => void;
  /** Environment to read GO and the cache root from (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

/**
 * The path of the `olm-validate` checker, built now from packages/testing/olm when the cache
 * has none (about a minute on a warm Go cache, several on a cold one; once; several
 * processes at once wait for one build). Throws saying why when Go cannot build it.
 */
export async function ensureOlmValidator(options: EnsureOlmValidatorOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const progress = options.onProgress ?? (() => {});
  const dir = olmValidatorCacheDir(olmValidatorModuleDir, env);
  const binary = join(dir, 'olm-validate');
  const complete = join(dir, 'complete');
  if (existsSync(complete)) return binary;
  await mkdir(dir, { recursive: true });
  const release = await acquireLock(join(dir, 'build.lock'), progress, 'building olm-validate');
  try {
    if (existsSync(complete)) return binary;
    const go = env.GO ?? 'go';
    const version = spawnSync(go, ['version'], { encoding: 'utf8' });
    if (version.error || version.status !== 0)
      throw new Error(
        `Cannot build olm-validate: Go is not installed (running "${go} version" failed). Install Go 1.26 or newer ` +
          '(https://go.dev/doc/install), or set GO to the go command.',
      );
    progress(`building olm-validate (operator-framework/api ${olmApiVersion()}) into ${dir} (once)`);
    const staging = `${binary}.${process.pid}`;
    await runGo(go, ['build', '-v', '-trimpath', '-o', staging, '.'], {
      cwd: olmValidatorModuleDir,
      env: { ...env, GOWORK: 'off', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly -buildvcs=false' },
      progress,
      what: 'go build of olm-validate',
    }).catch(async (error: unknown) => {
      await rm(staging, { force: true });
      throw error;
    });
    await rename(staging, binary);
    await writeFile(complete, JSON.stringify({ api: olmApiVersion(), go: version.stdout.trim() }) + '\n');
    return binary;
  } finally {
    await release();
  }
}

/** One finding of a validator, as olm-validate prints it. */
export interface OlmFinding {
  validator: string;
  object: string;
  level: 'Error' | 'Warning';
  type: string;
  field?: string;
  detail: string;
}

/** What olm-validate read of a bundle and found. */
export interface OlmValidation {
  package: string;
  channels: string[];
  defaultChannel: string;
  csv: string;
  crds: string[];
  objects: string[];
  validators: string[];
  findings: OlmFinding[];
}

/**
 * Runs operator-framework's bundle, CSV, CRD, OperatorHub (v2, capabilities, categories)
 * and good-practices validators on a bundle folder. Resolves with what they found, errors
 * and warnings alike; rejects when the bundle cannot be read at all.
 */
export async function validateOlmBundle(
  bundleDir: string,
  options: EnsureOlmValidatorOptions & { k8sVersion?: string } = {},
): Promise<OlmValidation> {
  const binary = await ensureOlmValidator(options);
  const args = [bundleDir, ...(options.k8sVersion ? [options.k8sVersion] : [])];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 || code === 1) resolvePromise(JSON.parse(stdout) as OlmValidation);
      else reject(new Error(`olm-validate ${bundleDir} exited ${code}: ${stderr.trim()}`));
    });
  });
}
