import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { metricsManifests, SERVICE_ACCOUNT_TOKEN_FILE } from './metrics-manifests.js';

const labels = { 'app.kubernetes.io/name': 'pool-operator', 'app.kubernetes.io/managed-by': 'nestor' };
const secure = { port: 8443, secure: true, auth: true };
const base = { name: 'pool-operator', namespace: 'pool-system' };

describe('metricsManifests', () => {
  it('writes the metrics Service in front of the container’s metrics port, told apart from the webhook Service', () => {
    const { metrics } = metricsManifests({ ...base, metrics: secure });
    assert.deepEqual(metrics, [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: 'pool-operator-metrics-service',
          namespace: 'pool-system',
          labels: { ...labels, 'app.kubernetes.io/component': 'metrics' },
        },
        spec: {
          selector: { 'app.kubernetes.io/name': 'pool-operator' },
          ports: [{ name: 'https', port: 8443, targetPort: 'metrics', protocol: 'TCP' }],
        },
      },
    ]);
  });

  it('writes a ServiceMonitor when asked: HTTPS with Prometheus’ own token, the self-signed certificate not verified', () => {
    const [service, monitor] = metricsManifests({ ...base, metrics: secure, serviceMonitor: true }).metrics;
    assert.deepEqual(monitor, {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'pool-operator-metrics-monitor', namespace: 'pool-system', labels },
      spec: {
        selector: {
          matchLabels: { 'app.kubernetes.io/name': 'pool-operator', 'app.kubernetes.io/component': 'metrics' },
        },
        endpoints: [
          {
            path: '/metrics',
            port: 'https',
            scheme: 'https',
            bearerTokenFile: SERVICE_ACCOUNT_TOKEN_FILE,
            tlsConfig: { insecureSkipVerify: true },
          },
        ],
      },
    });
    // It selects the metrics Service by labels the Service has.
    const selector = (monitor!.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
    for (const [key, value] of Object.entries(selector)) assert.equal(service!.metadata.labels?.[key], value);
  });

  it('scrapes plain HTTP without token or TLS when the operator serves metrics insecurely, and grants no reviews then', () => {
    const { metrics, rbac } = metricsManifests({
      ...base,
      metrics: { port: 8080, secure: false, auth: false },
      serviceMonitor: true,
    });
    assert.deepEqual((metrics[0]!.spec as { ports: unknown[] }).ports, [
      { name: 'http', port: 8080, targetPort: 'metrics', protocol: 'TCP' },
    ]);
    assert.deepEqual((metrics[1]!.spec as { endpoints: unknown[] }).endpoints, [
      { path: '/metrics', port: 'http', scheme: 'http' },
    ]);
    assert.deepEqual(rbac, []);
  });

  it('grants the reviews, writes the metrics-reader role and binds the ServiceAccounts named as readers', () => {
    const { rbac } = metricsManifests({ ...base, metrics: secure, metricsReaders: ['monitoring/prometheus-k8s'] });
    assert.deepEqual(
      rbac.map((m) => `${m.kind}/${m.metadata.name}`),
      [
        'ClusterRole/pool-operator-metrics-auth',
        'ClusterRoleBinding/pool-operator-metrics-auth',
        'ClusterRole/pool-operator-metrics-reader',
        'ClusterRoleBinding/pool-operator-metrics-reader-monitoring-prometheus-k8s',
      ],
    );
    assert.deepEqual(rbac[3]!.roleRef, {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'pool-operator-metrics-reader',
    });
    assert.deepEqual(rbac[3]!.subjects, [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }]);
    assert.throws(
      () => metricsManifests({ ...base, metrics: secure, metricsReaders: ['prometheus'] }),
      /metrics reader "prometheus" is not a ServiceAccount: write namespace\/name/,
    );
    assert.throws(
      () => metricsManifests({ ...base, metrics: { ...secure, auth: false }, metricsReaders: ['m/p'] }),
      /checks no callers/,
    );
  });
});

describe('metricsManifests with cert-manager', () => {
  const { metrics } = metricsManifests({
    ...base,
    metrics: secure,
    serviceMonitor: true,
    certManager: { issuer: 'pool-operator-selfsigned-issuer', writeIssuer: true },
  });

  it('writes a Certificate for the metrics Service’s names, from the self-signed Issuer', () => {
    assert.deepEqual(
      metrics.map((m) => `${m.kind}/${m.metadata.name}`),
      [
        'Service/pool-operator-metrics-service',
        'ServiceMonitor/pool-operator-metrics-monitor',
        'Issuer/pool-operator-selfsigned-issuer',
        'Certificate/pool-operator-metrics-certs',
      ],
    );
    assert.deepEqual(metrics[3]!.spec, {
      dnsNames: [
        'pool-operator-metrics-service.pool-system.svc',
        'pool-operator-metrics-service.pool-system.svc.cluster.local',
      ],
      issuerRef: { kind: 'Issuer', name: 'pool-operator-selfsigned-issuer' },
      secretName: 'pool-operator-metrics-server-cert',
    });
    const reused = metricsManifests({
      ...base,
      metrics: secure,
      certManager: { issuer: 'shared', writeIssuer: false },
    }).metrics;
    assert.deepEqual(
      reused.map((m) => m.kind),
      ['Service', 'Certificate'],
      'the webhooks’ Issuer is not written twice',
    );
  });

  it('lets the ServiceMonitor verify the certificate against its CA and the Service’s name', () => {
    const [endpoint] = (metrics[1]!.spec as { endpoints: [{ tlsConfig: unknown }] }).endpoints;
    assert.deepEqual(endpoint.tlsConfig, {
      serverName: 'pool-operator-metrics-service.pool-system.svc',
      ca: { secret: { name: 'pool-operator-metrics-server-cert', key: 'ca.crt' } },
    });
  });
});
