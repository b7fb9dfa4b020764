// Builds the controller-runtime peer (bench/controller-runtime) once, into a cache outside
// the repository keyed by a hash of its go.mod, go.sum and sources, as @nestor/testing
// caches the control plane. Needs Go (GO, /usr/local/go/bin/go or go on PATH).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const goModuleDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'controller-runtime');

export function goCommand(env = process.env) {
  if (env.GO) return env.GO;
  return existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
}

/** The controller-runtime version go.mod requires. */
export function controllerRuntimeVersion() {
  const goMod = readFileSync(join(goModuleDir, 'go.mod'), 'utf8');
  return /sigs\.k8s\.io\/controller-runtime (v\S+)/.exec(goMod)?.[1] ?? 'unknown';
}

export async function ensureGoOperator({ onProgress = () => {}, env = process.env } = {}) {
  const hash = createHash('sha256');
  for (const file of readdirSync(goModuleDir).sort()) {
    if (/^go\.(mod|sum)$|\.go$/.test(file)) hash.update(file).update(readFileSync(join(goModuleDir, file)));
  }
  const root = env.NESTOR_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'nestor');
  const dir = join(
    root,
    'bench',
    `controller-runtime-${controllerRuntimeVersion()}-${hash.digest('hex').slice(0, 12)}`,
  );
  const binary = join(dir, 'bench-operator');
  if (existsSync(binary)) return binary;
  const go = goCommand(env);
  onProgress(`building the controller-runtime peer with ${go} into ${dir} (once; about a minute on a cold cache)`);
  await mkdir(dir, { recursive: true });
  const staging = `${binary}.${process.pid}`;
  const result = spawnSync(go, ['build', '-trimpath', '-o', staging, '.'], {
    cwd: goModuleDir,
    env: { ...env, GOWORK: 'off', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly -buildvcs=false' },
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  if (result.status !== 0) {
    await rm(staging, { force: true });
    throw new Error(
      `building bench/controller-runtime failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stderr}`,
    );
  }
  await rename(staging, binary);
  return binary;
}
