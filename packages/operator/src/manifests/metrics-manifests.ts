// The objects around the operator's /metrics, after kubebuilder's config/default
// (metrics_service.yaml), config/rbac (metrics_auth_role, metrics_reader_role) and
// config/prometheus/monitor.yaml.
import { operatorLabels, type Manifest } from './manifest.js';
import { metricsAuthRules, metricsReaderRole } from './metrics-auth-rules.js';

/** Where Prometheus' pod finds its own ServiceAccount token (the ServiceMonitor's bearerTokenFile). */
export const SERVICE_ACCOUNT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface MetricsManifestOptions {
  name: string;
  namespace: string;
  metrics: { port: number; secure: boolean; auth: boolean };
  /** A Prometheus Operator ServiceMonitor scraping the metrics Service (default false). */
  serviceMonitor?: boolean;
  /** ServiceAccounts bound to the metrics-reader ClusterRole (Prometheus'), as `namespace/name`. */
  metricsReaders?: readonly string[];
  /**
   * cert-manager issues the metrics certificate (`metrics.certificateSecret` names its Secret)
   * from this self-signed Issuer, written here unless the webhooks' manifests already write
   * it; the ServiceMonitor then verifies the certificate against the Secret's `ca.crt`.
   */
  certManager?: { issuer: string; writeIssuer: boolean };
}

export interface MetricsManifests {
  /** The metrics Service, the ServiceMonitor when asked for, cert-manager's Certificate (and Issuer) with certManager. */
  metrics: Manifest[];
  /** The operator's rights to review its callers, the metrics-reader ClusterRole and its bindings. */
  rbac: Manifest[];
}

/** The names kubebuilder gives these objects, with the operator's name as its namePrefix. */
export function metricsNames(name: string) {
  return {
    service: `${name}-metrics-service`,
    monitor: `${name}-metrics-monitor`,
    certificate: `${name}-metrics-certs`,
    /** The Secret cert-manager writes the metrics certificate to. */
    secret: `${name}-metrics-server-cert`,
    authRole: `${name}-metrics-auth`,
    readerRole: `${name}-metrics-reader`,
  };
}

/** The label that tells the metrics Service from the webhook Service (both select the operator's pods). */
const COMPONENT = { 'app.kubernetes.io/component': 'metrics' };

export function metricsManifests(options: MetricsManifestOptions): MetricsManifests {
  const { name, namespace, metrics } = options;
  const names = metricsNames(name);
  const labels = operatorLabels(name);
  const scheme = metrics.secure ? 'https' : 'http';
  const service: Manifest = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: names.service, namespace, labels: { ...labels, ...COMPONENT } },
    spec: {
      selector: { 'app.kubernetes.io/name': name },
      ports: [{ name: scheme, port: metrics.port, targetPort: 'metrics', protocol: 'TCP' }],
    },
  };
  const monitor: Manifest = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: names.monitor, namespace, labels },
    spec: {
      selector: { matchLabels: { 'app.kubernetes.io/name': name, ...COMPONENT } },
      endpoints: [
        {
          path: '/metrics',
          port: scheme,
          scheme,
          ...(metrics.auth ? { bearerTokenFile: SERVICE_ACCOUNT_TOKEN_FILE } : {}),
          ...(metrics.secure ? { tlsConfig: tlsConfig() } : {}),
        },
      ],
    },
  };
  const certificates: Manifest[] = [];
  if (options.certManager) {
    if (!metrics.secure) throw new Error('a cert-manager metrics certificate needs HTTPS metrics (metrics.secure)');
    const { issuer, writeIssuer } = options.certManager;
    if (writeIssuer)
      certificates.push({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: issuer, namespace, labels },
        spec: { selfSigned: {} },
      });
    certificates.push({
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: names.certificate, namespace, labels },
      spec: {
        dnsNames: [`${names.service}.${namespace}.svc`, `${names.service}.${namespace}.svc.cluster.local`],
        issuerRef: { kind: 'Issuer', name: issuer },
        secretName: names.secret,
      },
    });
  }
  function tlsConfig(): Record<string, unknown> {
    // Without cert-manager the operator's certificate is self-signed at start-up: nothing to verify it against.
    if (!options.certManager) return { insecureSkipVerify: true };
    // As kubebuilder's servicemonitor_tls_patch: the Service's name, the CA from cert-manager's Secret.
    return { serverName: `${names.service}.${namespace}.svc`, ca: { secret: { name: names.secret, key: 'ca.crt' } } };
  }
  const subject = { kind: 'ServiceAccount', name, namespace };
  const rbac: Manifest[] = [];
  if (metrics.auth) {
    rbac.push(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: names.authRole, labels },
        rules: metricsAuthRules(),
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: names.authRole, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: names.authRole },
        subjects: [subject],
      },
      metricsReaderRole(names.readerRole, labels),
    );
    for (const reader of options.metricsReaders ?? []) {
      const [readerNamespace, readerName] = serviceAccountRef(reader);
      rbac.push({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${names.readerRole}-${readerNamespace}-${readerName}`.slice(0, 253), labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: names.readerRole },
        subjects: [{ kind: 'ServiceAccount', name: readerName, namespace: readerNamespace }],
      });
    }
  } else if (options.metricsReaders?.length) {
    throw new Error(
      'metricsReaders are bound to the metrics-reader ClusterRole, but /metrics checks no callers (metrics.auth is off): drop them, or turn auth on',
    );
  }
  return { metrics: [service, ...(options.serviceMonitor ? [monitor] : []), ...certificates], rbac };
}

/** `namespace/name` of a ServiceAccount. */
function serviceAccountRef(ref: string): [string, string] {
  const match = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(ref);
  if (!match)
    throw new Error(
      `metrics reader "${ref}" is not a ServiceAccount: write namespace/name, e.g. monitoring/prometheus-k8s`,
    );
  return [match[1]!, match[3]!];
}
