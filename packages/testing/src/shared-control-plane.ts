// One control plane for a whole test run, whatever the runner: started once by the
// runner's global setup in its main process, and announced to every test file through
// envtest's own variables (USE_EXISTING_CLUSTER, KUBECONFIG), which worker processes
// inherit, so each file's `TestEnvironment.start()` attaches to it in milliseconds.
// The runners' entry points (global-setup, vitest-setup, jest-setup, jest-teardown) are
// thin adapters over this.
import { ensureControlPlaneBinaries } from './controlplane-binaries.js';
import { importedCrds, type CrdSource } from './crds.js';
import { TestEnvironment } from './environment.js';

export interface SharedControlPlaneOptions {
  /**
   * kube-controller-manager (garbage collector, namespaces, Deployments): `true` needs it
   * (a Go build when no KUBEBUILDER_ASSETS has one), `false` runs none, `'if-available'`
   * runs it when the binaries have one. Default: NESTOR_CONTROLLER_MANAGER (true/false),
   * else 'if-available', so a machine without Go still gets a control plane.
   */
  controllerManager?: boolean | 'if-available';
  /**
   * CRDs to install once, for every file, before kube-controller-manager starts (so its
   * garbage collector knows their kinds at once). Default: those `nestor import crd`
   * vendored under `src/kinds` (`importedCrds()`), if any.
   */
  crds?: CrdSource[];
  /**
   * Fake nodes (kwok, with kube-scheduler) for the files whose pods must run: they attach
   * with `TestEnvironment.start({ nodes })`. Default: NESTOR_TEST_NODES, else none. They
   * add about a second to the start; files that need none are not slowed.
   */
  nodes?: number;
}

/** What the global setup exports to the test processes. */
export interface SharedControlPlane {
  server: string;
  kubeconfigPath: string;
  /** False when the caller brought a cluster (USE_EXISTING_CLUSTER=true): nothing was started. */
  started: boolean;
}

// Kept on globalThis: Jest loads its setup and teardown modules separately, and a runner
// may load this module twice (CommonJS and ESM); both must find the one environment.
const KEY = Symbol.for('@nestor/testing shared control plane');
type Holder = { [KEY]?: TestEnvironment };
const holder = globalThis as Holder;

/** Starts the shared control plane (unless the caller brought a cluster) and exports its variables. */
export async function startSharedControlPlane(options: SharedControlPlaneOptions = {}): Promise<SharedControlPlane> {
  const env = process.env;
  if (env.USE_EXISTING_CLUSTER === 'true' && !holder[KEY]) {
    return { server: '', kubeconfigPath: env.KUBECONFIG ?? '', started: false };
  }
  if (holder[KEY]) return describe(holder[KEY]);
  const started = Date.now();
  const log = (line: string) => process.stderr.write(`[nestor testing] ${line}\n`);
  const nodes = options.nodes ?? nodesFromEnv();
  // Fake nodes run kube-controller-manager (their pods need its controllers).
  const controllerManager = nodes > 0 || (await wantsControllerManager(options.controllerManager, log));
  const crds = options.crds ?? importedCrds();
  const environment = await TestEnvironment.start({
    controllerManager,
    ...(nodes > 0 ? { nodes } : {}),
    crds,
    onProgress: log,
    // The run's own global setup owns this one, even if USE_EXISTING_CLUSTER leaks in later.
    useExistingCluster: false,
  });
  holder[KEY] = environment;
  env.USE_EXISTING_CLUSTER = 'true';
  env.KUBECONFIG = environment.kubeconfigPath;
  env.NESTOR_SHARED_CONTROL_PLANE = 'true';
  log(
    `control plane ready at ${environment.server} in ${Date.now() - started} ms` +
      (controllerManager ? ' (with kube-controller-manager)' : ' (no kube-controller-manager: no garbage collection)') +
      (nodes > 0 ? `, ${nodes} fake nodes` : '') +
      (options.crds === undefined && crds.length > 0 ? `, the CRDs of ${crds.join(', ')}` : ''),
  );
  return describe(environment);
}

/** Stops it (when this process started it) and withdraws its variables. */
export async function stopSharedControlPlane(): Promise<void> {
  const environment = holder[KEY];
  if (!environment) return;
  delete holder[KEY];
  await environment.stop();
  if (process.env.KUBECONFIG === environment.kubeconfigPath) {
    delete process.env.USE_EXISTING_CLUSTER;
    delete process.env.KUBECONFIG;
    delete process.env.NESTOR_SHARED_CONTROL_PLANE;
  }
}

async function wantsControllerManager(
  asked: SharedControlPlaneOptions['controllerManager'],
  log: (line: string) => void,
): Promise<boolean> {
  const fromEnv = process.env.NESTOR_CONTROLLER_MANAGER?.trim().toLowerCase();
  const choice = asked ?? (fromEnv ? ['1', 'true', 'yes'].includes(fromEnv) : 'if-available');
  if (choice !== 'if-available') return choice;
  const binaries = await ensureControlPlaneBinaries({ onProgress: log });
  return binaries.kubeControllerManager !== undefined;
}

function nodesFromEnv(): number {
  const value = process.env.NESTOR_TEST_NODES?.trim();
  if (!value) return 0;
  const nodes = Number(value);
  if (!Number.isInteger(nodes) || nodes < 0) {
    throw new Error(
      `NESTOR_TEST_NODES is "${value}": write the number of fake nodes for the shared control plane, e.g. 3`,
    );
  }
  return nodes;
}

function describe(environment: TestEnvironment): SharedControlPlane {
  return { server: environment.server, kubeconfigPath: environment.kubeconfigPath, started: true };
}
