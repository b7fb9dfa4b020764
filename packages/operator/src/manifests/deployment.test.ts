import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { OPERATOR_NODE_OPTIONS, operatorDeployment } from './deployment.js';

describe('operatorDeployment', () => {
  const deployment = operatorDeployment({
    name: 'pool-operator',
    namespace: 'pool-system',
    image: 'registry.example/pool:1.2.3',
  });

  it('writes a Deployment that runs as the ServiceAccount, probed, limited and locked down', () => {
    const pod = (deployment.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    assert.equal(pod.serviceAccountName, 'pool-operator');
    assert.deepEqual(pod.securityContext, { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    const [container] = pod.containers as [Record<string, unknown> & { securityContext: Record<string, unknown> }];
    assert.equal(container.image, 'registry.example/pool:1.2.3');
    assert.deepEqual(container.ports, [
      { name: 'metrics', containerPort: 8443, protocol: 'TCP' },
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
    ]);
    assert.deepEqual((container.livenessProbe as { httpGet: unknown }).httpGet, { path: '/healthz', port: 'health' });
    assert.deepEqual((container.readinessProbe as { httpGet: unknown }).httpGet, { path: '/readyz', port: 'health' });
    assert.ok((container.resources as { limits?: unknown }).limits);
    assert.equal(container.securityContext.runAsNonRoot, true);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    assert.equal(container.securityContext.allowPrivilegeEscalation, false);
    const { selector, template } = deployment.spec as {
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> } };
    };
    for (const [key, value] of Object.entries(selector.matchLabels)) assert.equal(template.metadata.labels[key], value);
  });

  it('runs one replica, or one per shard of a sharded operator, each named by POD_NAME', () => {
    assert.equal((deployment.spec as { replicas: number }).replicas, 1);
    const sharded = operatorDeployment({ name: 'p', namespace: 'p', image: 'i', shardReplicas: 4 });
    assert.equal((sharded.spec as { replicas: number }).replicas, 4);
    const pod = (sharded.spec as { template: { spec: { containers: Array<{ env: Array<{ name: string }> }> } } })
      .template.spec;
    assert.ok(
      pod.containers[0]!.env.some((e) => e.name === 'POD_NAME'),
      'the shard id is the pod name',
    );
  });

  it('caps V8’s young generation through NODE_OPTIONS, with flags Node accepts there', () => {
    const [container] = (
      deployment.spec as { template: { spec: { containers: [{ env: { name: string; value?: string }[] }] } } }
    ).template.spec.containers;
    assert.equal(container.env.find((variable) => variable.name === 'NODE_OPTIONS')?.value, OPERATOR_NODE_OPTIONS);
    // An allocation burst with a sliding window of survivors, as a burst of reconciles makes:
    // V8 grows the young generation to absorb it unless capped. A flag Node refuses in
    // NODE_OPTIONS would make this throw (and the pod fail at start).
    const program = [
      "const v8 = require('node:v8');",
      'let window = [];',
      "for (let i = 0; i < 3e6; i++) { window.push({ i, s: 'x' + i }); if (window.length > 200000) window = []; }",
      "console.log(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);",
    ].join('\n');
    const youngBytes = (nodeOptions: string) =>
      Number(
        execFileSync(process.execPath, ['-e', program], {
          env: { ...process.env, NODE_OPTIONS: nodeOptions },
          encoding: 'utf8',
        }),
      );
    const capped = youngBytes(OPERATOR_NODE_OPTIONS);
    const uncapped = youngBytes('');
    // Two 4 MB semi-spaces (8 MB on a quiet machine); under load V8 was seen holding more
    // while a scavenge was under way (8.25, 9.5 and 12 MB), never past three semi-spaces and a
    // page. Uncapped it grows to 128 MB here.
    assert.ok(capped <= 12.25 * 2 ** 20, `young generation ${capped} B with ${OPERATOR_NODE_OPTIONS}`);
    assert.ok(uncapped > capped, `Node's default grows it further (${uncapped} B)`);
  });
});

describe('operatorDeployment: the settings the other objects expect', () => {
  type Container = {
    env: { name: string; value?: string }[];
    ports: { name: string; containerPort: number }[];
    livenessProbe?: { httpGet: unknown };
    readinessProbe?: { httpGet: unknown };
  };
  const podOf = (options: Partial<Parameters<typeof operatorDeployment>[0]>) => {
    const deployment = operatorDeployment({ name: 'pool-operator', namespace: 'pool-system', image: 'i', ...options });
    const pod = (
      deployment.spec as { template: { spec: { terminationGracePeriodSeconds: number; containers: [Container] } } }
    ).template.spec;
    const variables = Object.fromEntries(
      pod.containers[0].env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]),
    );
    return { pod, container: pod.containers[0], variables };
  };

  it('passes the ports and leader election as the variables of kubebuilder’s flags, by default :8443, :8081 and on', () => {
    const { variables, container } = podOf({});
    assert.equal(variables.METRICS_BIND_ADDRESS, ':8443');
    assert.equal(variables.HEALTH_PROBE_BIND_ADDRESS, ':8081');
    assert.equal(variables.LEADER_ELECT, 'true');
    assert.equal(variables.LEADER_ELECTION_ID, 'pool-operator');
    assert.equal(variables.LEADER_ELECTION_NAMESPACE, 'pool-system');
    assert.equal(variables.WATCH_NAMESPACE, undefined, 'every namespace');
    assert.deepEqual(
      container.ports.map((p) => [p.name, p.containerPort]),
      [
        ['metrics', 8443],
        ['health', 8081],
      ],
    );
  });

  it('probes the health port it is configured with, and none when the probes are off', () => {
    const { variables, container } = podOf({ metricsPort: 9443, healthPort: 9090, watchNamespace: 'pools' });
    assert.equal(variables.METRICS_BIND_ADDRESS, ':9443');
    assert.equal(variables.HEALTH_PROBE_BIND_ADDRESS, ':9090');
    assert.equal(variables.WATCH_NAMESPACE, 'pools');
    assert.deepEqual(container.ports, [
      { name: 'metrics', containerPort: 9443, protocol: 'TCP' },
      { name: 'health', containerPort: 9090, protocol: 'TCP' },
    ]);
    assert.deepEqual(container.livenessProbe?.httpGet, { path: '/healthz', port: 'health' });
    assert.deepEqual(container.readinessProbe?.httpGet, { path: '/readyz', port: 'health' });

    const off = podOf({ metricsPort: 0, healthPort: 0, leaderElection: false });
    assert.deepEqual(off.container.ports, []);
    assert.equal(off.container.livenessProbe, undefined);
    assert.equal(off.container.readinessProbe, undefined);
    assert.equal(off.variables.METRICS_BIND_ADDRESS, '0', 'off, as the flag says it');
    assert.equal(off.variables.HEALTH_PROBE_BIND_ADDRESS, '0');
    assert.equal(off.variables.LEADER_ELECT, undefined);
  });

  it('leaves out the variables of what the module’s own options set, which the operator would ignore', () => {
    const { variables } = podOf({ metricsPort: 9443, setByModule: ['metrics', 'leaderElection'] });
    assert.equal(variables.METRICS_BIND_ADDRESS, undefined);
    assert.equal(variables.LEADER_ELECT, undefined);
    assert.equal(variables.HEALTH_PROBE_BIND_ADDRESS, ':8081');
    const none = podOf({ setByModule: 'all' });
    assert.deepEqual(Object.keys(none.variables), ['NODE_ENV', 'NODE_OPTIONS']);
  });

  it('gives the pod the shutdown grace plus 10 s to stop: reconciles drain, Events flush, the Lease is released', () => {
    assert.equal(podOf({}).pod.terminationGracePeriodSeconds, 40, 'the default 30 s grace');
    assert.equal(podOf({ shutdownGraceMs: 45_500 }).pod.terminationGracePeriodSeconds, 56, 'rounded up');
    assert.equal(podOf({ shutdownGraceMs: 0 }).pod.terminationGracePeriodSeconds, 10);
  });

  it('mounts the metrics certificate’s Secret where METRICS_CERT_PATH says, when there is one', () => {
    const { pod, variables } = podOf({ metricsCertificateSecret: 'pool-operator-metrics-server-cert' });
    assert.equal(variables.METRICS_CERT_PATH, '/tmp/k8s-metrics-server/metrics-certs');
    const spec = pod as unknown as {
      volumes: { name: string; secret?: { secretName: string } }[];
      containers: [{ volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[] }];
    };
    assert.deepEqual(
      spec.volumes.find((v) => v.name === 'metrics-certs'),
      { name: 'metrics-certs', secret: { secretName: 'pool-operator-metrics-server-cert' } },
    );
    assert.deepEqual(
      spec.containers[0].volumeMounts.find((m) => m.name === 'metrics-certs'),
      { name: 'metrics-certs', mountPath: '/tmp/k8s-metrics-server/metrics-certs', readOnly: true },
    );
    assert.equal(podOf({}).variables.METRICS_CERT_PATH, undefined);
    assert.throws(() => podOf({ metricsCertificateSecret: 's', metricsSecure: false }), /serves no HTTPS metrics/);
  });

  it('refuses ports the Deployment could not name apart, or that are no ports', () => {
    assert.throws(() => podOf({ metricsPort: 8081 }), /metricsPort and healthPort are both 8081/);
    assert.throws(() => podOf({ healthPort: 70_000 }), /healthPort 70000 is not a port number/);
    assert.throws(() => podOf({ shutdownGraceMs: Number.NaN }), /shutdownGraceMs NaN is not a duration/);
  });
});
