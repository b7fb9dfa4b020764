// Builds crdify (sigs.k8s.io/crdify, the referee of nestor's CRD compatibility check) once
// from the Go module bench/crdify pins, into the cache beside the bench's other Go peers,
// keyed by a hash of its go.mod and go.sum. Needs Go (GO, /usr/local/go/bin/go or go on PATH);
// the module proxy serves exact versions, which go.sum fixes.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { goCommand } from './go-build.mjs';

export const crdifyModuleDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'crdify');

/** The crdify version bench/crdify/go.mod requires. */
export function crdifyVersion() {
  const goMod = readFileSync(join(crdifyModuleDir, 'go.mod'), 'utf8');
  return /sigs\.k8s\.io\/crdify (v\S+)/.exec(goMod)?.[1] ?? 'unknown';
}

export async function ensureCrdify({ onProgress = () => {}, env = process.env } = {}) {
  if (env.CRDIFY) return env.CRDIFY;
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum']) hash.update(file).update(readFileSync(join(crdifyModuleDir, file)));
  const root = env.NESTOR_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'nestor');
  const dir = join(root, 'bench', `crdify-${crdifyVersion()}-${hash.digest('hex').slice(0, 12)}`);
  const binary = join(dir, 'crdify');
  if (existsSync(binary)) return binary;
  const go = goCommand(env);
  onProgress(`building crdify ${crdifyVersion()} with ${go} into ${dir} (once; a few minutes on a cold cache)`);
  await mkdir(dir, { recursive: true });
  const staging = `${binary}.${process.pid}`;
  const result = spawnSync(go, ['build', '-trimpath', '-o', staging, 'sigs.k8s.io/crdify'], {
    cwd: crdifyModuleDir,
    env: { ...env, GOWORK: 'off', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly -buildvcs=false' },
    encoding: 'utf8',
    timeout: 20 * 60_000,
  });
  if (result.status !== 0) {
    await rm(staging, { force: true });
    throw new Error(`building crdify failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stderr}`);
  }
  await rename(staging, binary);
  return binary;
}
