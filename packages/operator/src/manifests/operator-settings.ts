// How the generated objects configure the operator they deploy, and the one place that
// turns those settings into the Deployment's environment. The variables are kubebuilder's
// manager flags as OperatorModule reads them (config/operator-flags.ts; a test there checks
// these names). Variables, not `args`: a container's args replace the image's CMD, which
// for a Node.js image is `node dist/main.js` itself; the environment works whatever the
// image's entrypoint is.

/** What the operator serves and how it runs, as its Deployment, Service and RBAC see it. */
export interface OperatorSettings {
  /** Port of /metrics (default 8443, as kubebuilder's `--metrics-bind-address=:8443`); 0: no metrics. */
  metricsPort?: number;
  /** /metrics over HTTPS (default true, the framework's default). */
  metricsSecure?: boolean;
  /** Callers of /metrics checked with a TokenReview and a SubjectAccessReview (default: metricsSecure). */
  metricsAuth?: boolean;
  /**
   * A Secret holding the metrics serving certificate (`tls.crt`, `tls.key`, cert-manager's),
   * mounted at METRICS_CERT_DIR and named by `METRICS_CERT_PATH`; default: none, the
   * operator makes a self-signed one.
   */
  metricsCertificateSecret?: string;
  /** Port of /healthz and /readyz (default 8081, as kubebuilder's); 0: no probes. */
  healthPort?: number;
  /** The module's `shutdownGraceMs` (default 30 s): the pod's grace period is derived from it. */
  shutdownGraceMs?: number;
  /** The one namespace the operator watches (the module's `namespace`, `WATCH_NAMESPACE`); default all. */
  watchNamespace?: string;
  /**
   * Leader election (default: on, the Lease named after the operator in its namespace, as
   * kubebuilder's `--leader-elect`); false: off.
   */
  leaderElection?: boolean | { id?: string; namespace?: string };
  /**
   * The module shards its controllers (`sharding`): the Deployment runs this many replicas,
   * each a shard, and the Lease rights include listing and watching the shard Leases.
   */
  shardReplicas?: number;
  /**
   * The leader migrates the objects of its CRDs to their storage version (the module's
   * `migrateStorageVersions`): the RBAC gets the ClusterRole `<name>-storage-migration`.
   * Default: as the operator, on unless it watches one namespace.
   */
  storageMigration?: boolean;
  /**
   * The settings the module's own options fix: the operator ignores their variables, so the
   * Deployment leaves them out (`'all'`: the module reads no flags, `readFlags: false`).
   */
  setByModule?: readonly OperatorSetting[] | 'all';
}

export type OperatorSetting = 'metrics' | 'health' | 'watchNamespace' | 'leaderElection';

/** Where the metrics certificate's Secret is mounted: kubebuilder's cert_metrics_manager_patch path. */
export const METRICS_CERT_DIR = '/tmp/k8s-metrics-server/metrics-certs';

/** The environment variables of kubebuilder's manager flags that the Deployment sets. */
export const OPERATOR_VARIABLES = {
  metrics: 'METRICS_BIND_ADDRESS',
  metricsCertPath: 'METRICS_CERT_PATH',
  health: 'HEALTH_PROBE_BIND_ADDRESS',
  watchNamespace: 'WATCH_NAMESPACE',
  leaderElect: 'LEADER_ELECT',
  leaderElectionId: 'LEADER_ELECTION_ID',
  leaderElectionNamespace: 'LEADER_ELECTION_NAMESPACE',
} as const;

export const DEFAULT_METRICS_PORT = 8443;
export const DEFAULT_HEALTH_PORT = 8081;
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
/**
 * Seconds the pod gets beyond the shutdown grace: the Event recorder's flush (bounded at 5 s),
 * the Lease's release and the servers' close come after the reconciles drain.
 */
export const SHUTDOWN_MARGIN_SECONDS = 10;

/** The settings with their defaults filled in. */
export interface ResolvedOperatorSettings {
  metrics?: { port: number; secure: boolean; auth: boolean; certificateSecret?: string };
  healthPort?: number;
  shutdownGraceMs: number;
  watchNamespace?: string;
  leaderElection?: { id: string; namespace: string };
  setByModule: readonly OperatorSetting[] | 'all';
}

export function resolveOperatorSettings(
  settings: OperatorSettings,
  operator: { name: string; namespace: string },
): ResolvedOperatorSettings {
  const metricsPort = settings.metricsPort ?? DEFAULT_METRICS_PORT;
  const healthPort = settings.healthPort ?? DEFAULT_HEALTH_PORT;
  for (const [what, port] of [
    ['metricsPort', metricsPort],
    ['healthPort', healthPort],
  ] as const) {
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`${what} ${port} is not a port number: use 1-65535, or 0 for none`);
  }
  if (metricsPort > 0 && metricsPort === healthPort)
    throw new Error(
      `metricsPort and healthPort are both ${metricsPort}: the Deployment names each port once; give them different ports`,
    );
  const secure = settings.metricsSecure ?? true;
  if (settings.metricsCertificateSecret && (!secure || metricsPort === 0))
    throw new Error(
      'a metrics certificate Secret is given, but the operator serves no HTTPS metrics: drop it, or serve metrics over HTTPS',
    );
  const election = settings.leaderElection ?? true;
  const grace = settings.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  if (!(grace >= 0) || !Number.isFinite(grace))
    throw new Error(`shutdownGraceMs ${grace} is not a duration: use a number of milliseconds`);
  return {
    ...(metricsPort > 0
      ? {
          metrics: {
            port: metricsPort,
            secure,
            auth: settings.metricsAuth ?? secure,
            ...(settings.metricsCertificateSecret ? { certificateSecret: settings.metricsCertificateSecret } : {}),
          },
        }
      : {}),
    ...(healthPort > 0 ? { healthPort } : {}),
    shutdownGraceMs: grace,
    ...(settings.watchNamespace ? { watchNamespace: settings.watchNamespace } : {}),
    ...(election
      ? {
          leaderElection: {
            id: (typeof election === 'object' && election.id) || operator.name,
            namespace: (typeof election === 'object' && election.namespace) || operator.namespace,
          },
        }
      : {}),
    setByModule: settings.setByModule ?? [],
  };
}

/**
 * `terminationGracePeriodSeconds`: the shutdown grace, in whole seconds rounded up, plus
 * SHUTDOWN_MARGIN_SECONDS; the kubelet kills the container only after the operator had
 * the time to drain its reconciles, flush its Events and release its Lease.
 */
export function terminationGracePeriodSeconds(shutdownGraceMs: number): number {
  return Math.ceil(shutdownGraceMs / 1000) + SHUTDOWN_MARGIN_SECONDS;
}

/** The variables that configure the operator as its objects expect, for what its module leaves out. */
export function operatorEnvironment(settings: ResolvedOperatorSettings): Array<{ name: string; value: string }> {
  const fixed = settings.setByModule;
  const passes = (setting: OperatorSetting) => fixed !== 'all' && !fixed.includes(setting);
  const env: Array<{ name: string; value: string }> = [];
  if (passes('metrics')) env.push({ name: OPERATOR_VARIABLES.metrics, value: bindAddress(settings.metrics?.port) });
  // Not a setting a module's option overrides silently: certDir in forRoot() would, and the mount would go unused.
  if (settings.metrics?.certificateSecret)
    env.push({ name: OPERATOR_VARIABLES.metricsCertPath, value: METRICS_CERT_DIR });
  if (passes('health')) env.push({ name: OPERATOR_VARIABLES.health, value: bindAddress(settings.healthPort) });
  if (passes('watchNamespace') && settings.watchNamespace)
    env.push({ name: OPERATOR_VARIABLES.watchNamespace, value: settings.watchNamespace });
  if (passes('leaderElection') && settings.leaderElection) {
    env.push(
      { name: OPERATOR_VARIABLES.leaderElect, value: 'true' },
      { name: OPERATOR_VARIABLES.leaderElectionId, value: settings.leaderElection.id },
      { name: OPERATOR_VARIABLES.leaderElectionNamespace, value: settings.leaderElection.namespace },
    );
  }
  return env;
}

/** `:port` (every interface: the kubelet and Prometheus reach the pod IP), or `0` for off. */
function bindAddress(port: number | undefined): string {
  return port ? `:${port}` : '0';
}
