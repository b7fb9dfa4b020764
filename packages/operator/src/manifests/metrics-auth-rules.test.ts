import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap } from '../client/kinds.js';
import { operatorManifests } from './operator-manifests.js';
import { metricsAuthRules, metricsReaderRole } from './metrics-auth-rules.js';

describe('RBAC for secure /metrics', () => {
  const manifests = operatorManifests({
    name: 'demo-operator',
    namespace: 'demo-system',
    image: 'registry.example/demo:1',
    controllers: [{ resource: ConfigMap }],
  });

  it('lets the operator create TokenReviews and SubjectAccessReviews through a ClusterRole of its own, and nothing more on them', () => {
    const role = manifests.rbac.find(
      (m) => m.kind === 'ClusterRole' && m.metadata.name === 'demo-operator-metrics-auth',
    )!;
    const binding = manifests.rbac.find(
      (m) => m.kind === 'ClusterRoleBinding' && m.metadata.name === 'demo-operator-metrics-auth',
    )!;
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'demo-operator', namespace: 'demo-system' }]);
    const rules = role.rules as Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
    for (const [group, resource] of [
      ['authentication.k8s.io', 'tokenreviews'],
      ['authorization.k8s.io', 'subjectaccessreviews'],
    ] as const) {
      const granted = rules.filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource));
      assert.deepEqual(
        granted.flatMap((r) => r.verbs),
        ['create'],
        `${resource}.${group}`,
      );
    }
    assert.deepEqual(role.rules, metricsAuthRules());
    assert.equal(metricsAuthRules().length, 2);
  });

  it('writes a metrics-reader ClusterRole that allows only get on /metrics', () => {
    const reader = manifests.rbac.find((m) => m.metadata.name === 'demo-operator-metrics-reader');
    assert.deepEqual(reader, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: {
        name: 'demo-operator-metrics-reader',
        labels: { 'app.kubernetes.io/name': 'demo-operator', 'app.kubernetes.io/managed-by': 'nestor' },
      },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
    assert.deepEqual(metricsReaderRole('plain').metadata, { name: 'plain' });
  });
});
