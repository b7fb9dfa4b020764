// Builds a Go peer once, into a cache outside the repository keyed by a hash of its go.mod,
// go.sum and sources, as @nestor/testing caches the control plane: the controller-runtime
// peer (bench/controller-runtime, the default) or the multicluster-runtime one
// (bench/multicluster-runtime, bench/fleet.mjs). Needs Go (GO, /usr/local/go/bin/go or go on PATH).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const goModuleDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'controller-runtime');

/** The Go peers: their module folder, and the module whose version names them. */
const PEERS = {
  'controller-runtime': { dir: goModuleDir, module: 'sigs.k8s.io/controller-runtime' },
  'multicluster-runtime': {
    dir: join(goModuleDir, '..', 'multicluster-runtime'),
    module: 'sigs.k8s.io/multicluster-runtime',
  },
};

function peerOf(name) {
  const peer = PEERS[name];
  if (!peer) throw new Error(`no Go peer "${name}": ${Object.keys(PEERS).join(' or ')}`);
  return peer;
}

export function goCommand(env = process.env) {
  if (env.GO) return env.GO;
  return existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
}

/** The version of a module (controller-runtime by default) a peer's go.mod requires. */
export function goPeerVersion(peer = 'controller-runtime', module = peerOf(peer).module) {
  const goMod = readFileSync(join(peerOf(peer).dir, 'go.mod'), 'utf8');
  const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`^\\s*(?:require\\s+)?${escaped} (v\\S+)`, 'm').exec(goMod)?.[1] ?? 'unknown';
}

/** The controller-runtime version the controller-runtime peer's go.mod requires. */
export function controllerRuntimeVersion() {
  return goPeerVersion('controller-runtime');
}

/** The path of the peer's binary (`peer`: 'controller-runtime', the default, or 'multicluster-runtime'), built if missing. */
export async function ensureGoOperator({ onProgress = () => {}, env = process.env, peer = 'controller-runtime' } = {}) {
  const moduleDir = peerOf(peer).dir;
  const hash = createHash('sha256');
  for (const file of readdirSync(moduleDir).sort()) {
    if (/^go\.(mod|sum)$|\.go$/.test(file)) hash.update(file).update(readFileSync(join(moduleDir, file)));
  }
  const root = env.NESTOR_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'nestor');
  const dir = join(root, 'bench', `${peer}-${goPeerVersion(peer)}-${hash.digest('hex').slice(0, 12)}`);
  const binary = join(dir, 'bench-operator');
  if (existsSync(binary)) return binary;
  const go = goCommand(env);
  onProgress(`building the ${peer} peer with ${go} into ${dir} (once; about a minute on a cold cache)`);
  await mkdir(dir, { recursive: true });
  const staging = `${binary}.${process.pid}`;
  const result = spawnSync(go, ['build', '-trimpath', '-o', staging, '.'], {
    cwd: moduleDir,
    env: { ...env, GOWORK: 'off', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly -buildvcs=false' },
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  if (result.status !== 0) {
    await rm(staging, { force: true });
    throw new Error(
      `building bench/${peer} failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stderr}`,
    );
  }
  await rename(staging, binary);
  return binary;
}
