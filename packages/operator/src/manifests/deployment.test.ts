import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { operatorDeployment } from './deployment.js';

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
      { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
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
});
