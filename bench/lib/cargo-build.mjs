// Builds the kube-rs peer (bench/kube-rs) once, into a cache outside the repository keyed by a
// hash of its Cargo.toml, Cargo.lock and sources, as go-build.mjs does the Go peers. Needs cargo
// (CARGO, ~/.cargo/bin/cargo or cargo on PATH) and the crate registry on a cold cache; the
// first release build takes ~10 min on 2 cores, then the binary is reused.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { copyFile, mkdir, rename } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const crateDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'kube-rs');

export function cargoCommand(env = process.env) {
  if (env.CARGO) return env.CARGO;
  const home = join(homedir(), '.cargo', 'bin', 'cargo');
  return existsSync(home) ? home : 'cargo';
}

/** The version of a crate (kube by default) Cargo.lock resolved. */
export function crateVersion(crate = 'kube') {
  const lock = readFileSync(join(crateDir, 'Cargo.lock'), 'utf8');
  return new RegExp(`name = "${crate}"\\nversion = "([^"]+)"`).exec(lock)?.[1] ?? 'unknown';
}

function sourceHash() {
  const hash = createHash('sha256');
  for (const file of ['Cargo.toml', 'Cargo.lock']) hash.update(file).update(readFileSync(join(crateDir, file)));
  for (const file of readdirSync(join(crateDir, 'src')).sort()) {
    hash.update(file).update(readFileSync(join(crateDir, 'src', file)));
  }
  return hash.digest('hex').slice(0, 12);
}

/** The path of the kube-rs peer's binary, built (release, --locked) if missing. */
export async function ensureKubeRsOperator({ onProgress = () => {}, env = process.env } = {}) {
  const root = env.NESTOR_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'nestor');
  const dir = join(root, 'bench', `kube-rs-${crateVersion()}-${sourceHash()}`);
  const binary = join(dir, 'bench-operator');
  if (existsSync(binary)) return binary;
  // One target directory for every version: a source change rebuilds only this crate.
  const target = join(root, 'bench', 'kube-rs-target');
  const cargo = cargoCommand(env);
  onProgress(`building the kube-rs peer with ${cargo} into ${dir} (once; ~10 min on 2 cores on a cold cache)`);
  await mkdir(dir, { recursive: true });
  // Asynchronous, unlike go-build: a build this long should not block the caller's event loop.
  const { code, stderr } = await new Promise((resolve, reject) => {
    const child = spawn(cargo, ['build', '--release', '--locked'], {
      cwd: crateDir,
      env: { ...env, CARGO_TARGET_DIR: target },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-20_000)));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stderr }));
  });
  if (code !== 0) throw new Error(`building bench/kube-rs failed (exit ${code}):\n${stderr}`);
  const staging = `${binary}.${process.pid}`;
  await copyFile(join(target, 'release', 'bench-operator'), staging);
  await rename(staging, binary);
  return binary;
}
