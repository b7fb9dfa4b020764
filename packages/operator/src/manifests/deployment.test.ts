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
    assert.ok(capped <= 8 * 2 ** 20, `young generation ${capped} B with ${OPERATOR_NODE_OPTIONS}`);
    assert.ok(uncapped > capped, `Node's default grows it further (${uncapped} B)`);
  });
});
