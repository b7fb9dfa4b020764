import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireLock, nestorCacheRoot } from './download-cache.js';
import { downloadEnvtestBinaries, EnvtestVersionUnavailable } from './envtest-download.js';
import { exactVersion } from './envtest-index.js';
import { runGo } from './go-command.js';
import { ensureKwok } from './kwok-binary.js';
import type { ControlPlaneBinaries } from './binary-paths.js';

export type { ControlPlaneBinaries } from './binary-paths.js';

export interface EnsureBinariesOptions {
  /** Called with human-readable progress lines while a build runs. */
  onProgress?: (line: string) => void;
  /** Environment to read envtest's variables from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * kube-controller-manager is needed: envtest's archives carry none, so without
   * KUBEBUILDER_ASSETS / TEST_ASSET_* this means the Go build (or its cache).
   */
  controllerManager?: boolean;
  /**
   * Fake nodes are wanted: kube-scheduler (the Go build, unless TEST_ASSET_KUBE_SCHEDULER or
   * KUBEBUILDER_ASSETS has one) and kwok (TEST_ASSET_KWOK, else built once into the cache).
   */
  nodes?: boolean;
}

/** Where the binaries come from when no envtest variable names them: NESTOR_CONTROLPLANE_SOURCE. */
export type ControlPlaneSource = 'auto' | 'download' | 'go';

/** What the Go module builds, by binary name. etcd's main package builds a binary named "server". */
const GO_PACKAGES = {
  'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
  'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
  'kube-scheduler': 'k8s.io/kubernetes/cmd/kube-scheduler',
  etcd: 'go.etcd.io/etcd/server/v3',
} as const;
type GoBinary = keyof typeof GO_PACKAGES;
// kube-scheduler came later: a cache built before it lacks it and is completed, not rebuilt.
const CORE: GoBinary[] = ['kube-apiserver', 'kube-controller-manager', 'etcd'];
const ALL = Object.keys(GO_PACKAGES) as GoBinary[];

/** The Go module that pins the control plane: packages/testing/controlplane. */
export const controlPlaneModuleDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'controlplane');

/** Kubernetes version the Go module requires, read from its go.mod. */
export function kubernetesVersion(moduleDir = controlPlaneModuleDir): string {
  const goMod = readFileSync(join(moduleDir, 'go.mod'), 'utf8');
  const match = /^\s*k8s\.io\/kubernetes (v\d+\.\d+\.\d+)\s*$/m.exec(goMod);
  if (!match?.[1]) throw new Error(`${moduleDir}/go.mod does not require k8s.io/kubernetes at a release version`);
  return match[1];
}

/**
 * The cache folder for this module's binaries: outside the repository, keyed by the
 * Kubernetes version and a hash of go.sum, so every clone of the same module reuses it
 * and any change of a dependency builds anew.
 */
export function controlPlaneCacheDir(moduleDir = controlPlaneModuleDir, env = process.env): string {
  const sum = createHash('sha256')
    .update(readFileSync(join(moduleDir, 'go.sum')))
    .digest('hex')
    .slice(0, 12);
  return join(nestorCacheRoot(env), 'controlplane', `${kubernetesVersion(moduleDir)}-${sum}`);
}

/**
 * Finds the binaries with envtest's precedence: TEST_ASSET_* for single binaries, then
 * KUBEBUILDER_ASSETS; else, as NESTOR_CONTROLPLANE_SOURCE says (see controlPlaneFromCache):
 * the prebuilt envtest archive of the version (downloaded once into the cache), or
 * Nestor's Go build (built once into the cache).
 */
export async function ensureControlPlaneBinaries(options: EnsureBinariesOptions = {}): Promise<ControlPlaneBinaries> {
  const binaries = await controlPlaneBinaries(options);
  if (!options.nodes) return binaries;
  if (!binaries.kubeScheduler) throw new Error(`fake nodes need kube-scheduler, and ${binaries.origin} has none`);
  return { ...binaries, kwok: await ensureKwok(options) };
}

async function controlPlaneBinaries(options: EnsureBinariesOptions): Promise<ControlPlaneBinaries> {
  const env = options.env ?? process.env;
  const assets = env.KUBEBUILDER_ASSETS;
  // Where each binary is asked for, named by the variable that asks, for error messages.
  const given = (variable: string, name: string) =>
    env[variable]
      ? { path: env[variable], from: variable }
      : assets
        ? { path: join(assets, name), from: `KUBEBUILDER_ASSETS=${assets}` }
        : undefined;
  const apiServer = given('TEST_ASSET_KUBE_APISERVER', 'kube-apiserver');
  const etcd = given('TEST_ASSET_ETCD', 'etcd');
  const kcm = given('TEST_ASSET_KUBE_CONTROLLER_MANAGER', 'kube-controller-manager');
  const scheduler = given('TEST_ASSET_KUBE_SCHEDULER', 'kube-scheduler');
  if (apiServer || etcd) {
    const origin = assets ? `KUBEBUILDER_ASSETS=${assets}` : 'TEST_ASSET_* variables';
    // Check every binary given before building the missing ones: a wrong path fails at once.
    const kubeApiServer = apiServer && (await requireExecutable(apiServer.path, 'kube-apiserver', apiServer.from));
    const etcdPath = etcd && (await requireExecutable(etcd.path, 'etcd', etcd.from));
    // envtest ships no kube-controller-manager: one in KUBEBUILDER_ASSETS is optional, an explicit one is not.
    const kubeControllerManager =
      kcm && (kcm.from === 'TEST_ASSET_KUBE_CONTROLLER_MANAGER' || existsSync(kcm.path))
        ? await requireExecutable(kcm.path, 'kube-controller-manager', kcm.from)
        : undefined;
    const kubeScheduler =
      scheduler && (scheduler.from === 'TEST_ASSET_KUBE_SCHEDULER' || existsSync(scheduler.path))
        ? await requireExecutable(scheduler.path, 'kube-scheduler', scheduler.from)
        : undefined;
    // envtest ships no kube-scheduler either: fake nodes then take it from the Go build.
    const needsBuild = !kubeApiServer || !etcdPath || (options.nodes && !kubeScheduler);
    const built = needsBuild ? await cachedControlPlane(options) : undefined;
    const schedulerPath = kubeScheduler ?? built?.kubeScheduler;
    return {
      kubeApiServer: kubeApiServer ?? built!.kubeApiServer,
      etcd: etcdPath ?? built!.etcd,
      ...(kubeControllerManager ? { kubeControllerManager } : {}),
      ...(schedulerPath ? { kubeScheduler: schedulerPath } : {}),
      origin,
    };
  }
  return cachedControlPlane(options);
}

/**
 * The binaries from Nestor's cache, by NESTOR_CONTROLPLANE_SOURCE:
 * - `auto` (default): the Go build's cache when it is complete and no NESTOR_ENVTEST_VERSION
 *   is asked for; else envtest's prebuilt archive of NESTOR_ENVTEST_VERSION (default: the
 *   Go module's Kubernetes version), downloaded as setup-envtest does; else, when the index
 *   cannot be reached or lacks that version, the Go build, saying why.
 *   A kube-controller-manager requirement goes to the Go build (envtest ships none).
 * - `download`: envtest's archive only; fails instead of building.
 * - `go`: the Go build only, as before envtest downloads existed.
 */
async function cachedControlPlane(options: EnsureBinariesOptions): Promise<ControlPlaneBinaries> {
  const env = options.env ?? process.env;
  const progress = options.onProgress ?? (() => {});
  const source = controlPlaneSource(env);
  if (source === 'go') return buildControlPlane(options);
  const module = kubernetesVersion();
  const asked = env.NESTOR_ENVTEST_VERSION?.trim() || undefined;
  if (source === 'auto') {
    if (!asked && existsSync(join(controlPlaneCacheDir(controlPlaneModuleDir, env), 'complete'))) {
      return buildControlPlane(options);
    }
    if (options.controllerManager || options.nodes) {
      const needed = options.controllerManager ? 'kube-controller-manager' : 'kube-scheduler';
      progress(`${needed} is needed and envtest archives carry none: using the Go build`);
      return buildControlPlane(options);
    }
  } else if (options.controllerManager || options.nodes) {
    const [needed, variable] = options.controllerManager
      ? ['kube-controller-manager', 'TEST_ASSET_KUBE_CONTROLLER_MANAGER']
      : ['kube-scheduler', 'TEST_ASSET_KUBE_SCHEDULER'];
    throw new Error(
      `${needed} is needed, but NESTOR_CONTROLPLANE_SOURCE=download and envtest archives carry none: ` +
        `set NESTOR_CONTROLPLANE_SOURCE=auto or go (a Go build), or ${variable}`,
    );
  }
  const version = asked ?? module;
  try {
    return await downloadEnvtestBinaries({ version, env, onProgress: progress });
  } catch (error) {
    if (source === 'download') throw error;
    // The Go module builds one version: falling back to it is right only when that is the one asked for.
    if (error instanceof EnvtestVersionUnavailable && exactVersion(version) !== module) {
      throw new Error(
        `${error.message}. The Go fallback builds only ${module} (packages/testing/controlplane): ` +
          `ask for an offered version, or unset NESTOR_ENVTEST_VERSION`,
        { cause: error },
      );
    }
    progress(`no prebuilt envtest binaries (${(error as Error).message}); building ${module} from Go modules instead`);
    return buildControlPlane(options);
  }
}

function controlPlaneSource(env: NodeJS.ProcessEnv): ControlPlaneSource {
  const value = (env.NESTOR_CONTROLPLANE_SOURCE ?? 'auto').trim().toLowerCase() || 'auto';
  if (value === 'auto' || value === 'download' || value === 'go') return value;
  throw new Error(
    `NESTOR_CONTROLPLANE_SOURCE is "${env.NESTOR_CONTROLPLANE_SOURCE}": write auto (download envtest's binaries, else build with Go), download or go`,
  );
}

async function requireExecutable(path: string, name: string, from: string): Promise<string> {
  try {
    const info = await stat(path);
    if (info.isFile() && (info.mode & 0o111) !== 0) return path;
    throw new Error('not an executable file');
  } catch (error) {
    throw new Error(
      `${name} not usable at ${path} (from ${from}): ${(error as Error).message}. ` +
        `Point the variable at an executable ${name}, or unset it to let Nestor build the control plane ` +
        `(npm run controlplane).`,
      { cause: error },
    );
  }
}

/**
 * Builds kube-apiserver, kube-controller-manager, kube-scheduler and etcd from the Go module
 * into the cache, once. Idempotent, and safe to run from several processes at once: one
 * builds under a lock, the others wait for it and reuse its result. A cache from before
 * kube-scheduler was built here keeps its binaries: the scheduler is added when asked for
 * (`nodes`), not the whole control plane rebuilt.
 */
export async function buildControlPlane(options: EnsureBinariesOptions = {}): Promise<ControlPlaneBinaries> {
  const env = options.env ?? process.env;
  const progress = options.onProgress ?? (() => {});
  const dir = controlPlaneCacheDir(controlPlaneModuleDir, env);
  const wanted = options.nodes ? ALL : CORE;
  const result = (): ControlPlaneBinaries => {
    const kubeScheduler = join(dir, 'kube-scheduler');
    return {
      kubeApiServer: join(dir, 'kube-apiserver'),
      kubeControllerManager: join(dir, 'kube-controller-manager'),
      ...(existsSync(kubeScheduler) ? { kubeScheduler } : {}),
      etcd: join(dir, 'etcd'),
      origin: `Nestor's build cache ${dir}`,
    };
  };
  const complete = join(dir, 'complete');
  const missing = () => wanted.filter((name) => !existsSync(join(dir, name)));
  if (existsSync(complete) && missing().length === 0) return result();

  await mkdir(dir, { recursive: true });
  const release = await acquireLock(join(dir, 'build.lock'), progress);
  try {
    // Another process may have built it while we waited.
    if (existsSync(complete) && missing().length === 0) return result();
    const toBuild = existsSync(complete) ? missing() : ALL;
    const go = env.GO ?? 'go';
    const version = spawnSync(go, ['version'], { encoding: 'utf8' });
    if (version.error || version.status !== 0) {
      throw new Error(
        `Cannot build the Kubernetes control plane: Go is not installed (running "${go} version" failed). ` +
          `Install Go 1.26 or newer (https://go.dev/doc/install), or point KUBEBUILDER_ASSETS at a folder ` +
          `with envtest binaries (kube-apiserver, etcd), or set USE_EXISTING_CLUSTER=true with a KUBECONFIG.`,
      );
    }
    const k8s = kubernetesVersion();
    const [, minor] = /^v1\.(\d+)\./.exec(k8s) ?? [];
    progress(`building ${toBuild.join(', ')} ${k8s} with ${version.stdout.trim()}`);
    progress(
      toBuild.length === ALL.length
        ? `into ${dir} (a cold build takes about 6 minutes on 2 cores; later runs reuse it)`
        : `into ${dir}, beside the binaries built before`,
    );
    const staging = join(dir, `staging-${process.pid}`);
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    const started = Date.now();
    await runGoBuild(go, staging, toBuild, k8s, minor ?? '0', env, progress);
    if (toBuild.includes('etcd')) await rename(join(staging, 'server'), join(staging, 'etcd'));
    for (const name of toBuild) await rename(join(staging, name), join(dir, name));
    await rm(staging, { recursive: true, force: true });
    await writeFile(
      complete,
      JSON.stringify({ kubernetes: k8s, go: version.stdout.trim(), builtAt: new Date().toISOString() }) + '\n',
    );
    progress(`${toBuild.join(', ')} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return result();
  } finally {
    await release();
  }
}

function runGoBuild(
  go: string,
  outDir: string,
  binaries: GoBinary[],
  k8s: string,
  minor: string,
  env: NodeJS.ProcessEnv,
  progress: (line: string) => void,
): Promise<void> {
  const ldflags = [
    '-s',
    '-w',
    `-X k8s.io/component-base/version.gitVersion=${k8s}`,
    '-X k8s.io/component-base/version.gitMajor=1',
    `-X k8s.io/component-base/version.gitMinor=${minor}`,
    '-X k8s.io/component-base/version.gitTreeState=clean',
  ].join(' ');
  const args = [
    'build',
    '-v',
    '-trimpath',
    `-ldflags=${ldflags}`,
    '-o',
    `${outDir}/`,
    ...binaries.map((name) => GO_PACKAGES[name]),
  ];
  return runGo(go, args, {
    cwd: controlPlaneModuleDir,
    env: { ...env, GOWORK: 'off', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly -buildvcs=false' },
    progress,
    what: 'go build of the control plane',
  });
}
