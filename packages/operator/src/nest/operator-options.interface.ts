import type { KubeConfig } from '@kubernetes/client-node';
import type { ClassType } from '../crd/field.decorator.js';

export interface OperatorModuleOptions {
  /**
   * Where to find the cluster: a KubeConfig, a kubeconfig file path, or nothing for the
   * usual order (in-cluster service account, then KUBECONFIG, then ~/.kube/config).
   */
  kubeConfig?: KubeConfig | string;
  /** Watch only these namespaces (default: all). One namespace is the common case. */
  namespace?: string;
  /** Reconciles running at once across all controllers (default 16). */
  concurrency?: number;
  /** Field manager for server-side apply and writes (default 'nestor'). */
  fieldManager?: string;
  /** Bound on the wait for the caches' first sync at start-up (default 120 s). */
  cacheSyncTimeoutMs?: number;
  /** How long running reconciles may take to finish at shutdown (default 30 s). */
  shutdownGraceMs?: number;
  /** Do not start the manager on bootstrap (tests that drive it by hand). */
  manualStart?: boolean;
  /**
   * For development and tests: server-side apply CRDs at start-up and wait until they are
   * Established and served, before the kinds are checked and watched. `true`: the CRDs of
   * every @CustomResource kind the controllers use (their kind, owned and watched kinds);
   * a list: the CRDs of these @CustomResource classes. Off by default: in production apply
   * the CRDs `nestor manifests` writes, so the operator needs no rights on CRDs.
   */
  installCustomResources?: boolean | ClassType[];
  /** Prometheus metrics on GET /metrics (default port 8080; 0 turns it off). */
  metrics?: { port?: number; host?: string };
  /** Probes GET /healthz and /readyz (default port 8081; 0 turns it off; may share the metrics port). */
  health?: { port?: number; host?: string };
  /** Run controllers on one replica at a time, elected through a coordination.k8s.io Lease. */
  leaderElection?: LeaderElectionOptions;
}

export interface LeaderElectionOptions {
  /** The Lease's name, shared by the operator's replicas. */
  id: string;
  /** The Lease's namespace (default: POD_NAMESPACE, the in-cluster namespace, the module's namespace, else 'default'). */
  namespace?: string;
  /** This replica's identity (default: hostname + random suffix). */
  identity?: string;
  /** Defaults as controller-runtime: 15 s, 10 s, 2 s. */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /**
   * On losing the lease the running reconciles are aborted at once; then the process exits
   * ('exit', the default, as controller-runtime) or stops reconciling, stands by with warm
   * caches and campaigns again ('stop'). Either way KubeClient refuses writes once the
   * lease may have expired.
   */
  onLost?: 'exit' | 'stop';
}
