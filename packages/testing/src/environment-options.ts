import type { Authentication } from './admin-identity.js';
import type { CrdSource } from './crds.js';

export interface TestEnvironmentOptions {
  /**
   * CRDs to install once the API server is ready: objects, YAML/JSON files or folders of them
   * (a kind's own `customResourceDefinition(Kind)`, those `nestor import crd` vendored:
   * `importedCrds()`). On a control plane this environment starts, they are installed before
   * kube-controller-manager, so its garbage collector knows their kinds at once; on an
   * existing cluster, after (see docs/testing.md on the garbage collector's delay).
   */
  crds?: CrdSource[];
  /**
   * Start kube-controller-manager too: `true` for the garbage collector, namespace,
   * Deployment and ReplicaSet controllers, or the list of controllers to run.
   */
  controllerManager?: boolean | string[];
  /**
   * Fake Nodes, as many as given: kwok runs them (pods go Running and Ready, Job pods
   * complete) and kube-scheduler places pods on them; kube-controller-manager runs with the
   * workload and node controllers (Jobs, StatefulSets, DaemonSets, node health, evictions).
   * Faults through `env.nodes`. With an existing cluster (USE_EXISTING_CLUSTER, the shared
   * control plane), waits until it has this many fake nodes ready instead of starting any.
   */
  nodes?: number;
  /** How the admin user authenticates (default 'token'). */
  authentication?: Authentication;
  /** Copy the control plane's output to stderr (default: KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT). */
  attachControlPlaneOutput?: boolean;
  /** Bound on start-up (default: KUBEBUILDER_CONTROLPLANE_START_TIMEOUT or 60 s). */
  startTimeoutMs?: number;
  /** Bound on each process's graceful stop before SIGKILL (default: KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT or 20 s). */
  stopTimeoutMs?: number;
  /** Use the cluster KUBECONFIG names instead of starting one (default: USE_EXISTING_CLUSTER). */
  useExistingCluster?: boolean;
  /** Fixed ports (default: free ones). */
  apiServerPort?: number;
  etcdPort?: number;
  /** Extra kube-apiserver flags, e.g. ['--watch-cache=false']. */
  apiServerFlags?: string[];
  /**
   * kube-apiserver reaches etcd through a TcpRelay (`etcdRelay`), for storage faults: a slow
   * etcd (`etcdRelay.slow(ms)`), or one cut off (`partition()`). Default false.
   */
  etcdRelay?: boolean;
  /**
   * Turn on the API server's audit log: every write (not reads), at Metadata level, the
   * record of who wrote what and when for fault tests. Read it with auditEvents().
   */
  auditLog?: boolean;
  /** Where progress of a first control-plane build goes (default: stderr). */
  onProgress?: (line: string) => void;
}

/** The bounds every start and stop of an environment keeps. */
export interface EnvironmentBounds {
  startTimeoutMs: number;
  stopTimeoutMs: number;
}

/** The options' bounds, else envtest's variables (KUBEBUILDER_CONTROLPLANE_START_TIMEOUT, ..._STOP_TIMEOUT). */
export function environmentBounds(options: TestEnvironmentOptions, env = process.env): EnvironmentBounds {
  return {
    startTimeoutMs: options.startTimeoutMs ?? durationMs(env.KUBEBUILDER_CONTROLPLANE_START_TIMEOUT, 60_000),
    stopTimeoutMs: options.stopTimeoutMs ?? durationMs(env.KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT, 20_000),
  };
}

/** Parses envtest's duration variables: Go durations ("90s", "2m") or bare seconds. */
function durationMs(value: string | undefined, fallbackMs: number): number {
  if (!value) return fallbackMs;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  if (!match) throw new Error(`cannot read the duration "${value}": write it as 90s, 2m or 500ms`);
  const n = Number(match[1]);
  return match[2] === 'ms' ? n : match[2] === 'm' ? n * 60_000 : n * 1000;
}

/** An envtest boolean variable (USE_EXISTING_CLUSTER, ...): 1, true or yes. */
export function flag(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes'].includes(value.toLowerCase());
}
