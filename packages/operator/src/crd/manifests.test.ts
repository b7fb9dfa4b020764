import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments, parse } from 'yaml';
import { ConfigMap, Deployment } from '../client/kinds.js';
import { CustomResource } from './custom-resource.decorator.js';
import { Field } from './field.decorator.js';
import { customResourcesOf, manifestFiles, operatorManifests, type Manifest } from './manifests.js';

class Spec {
  @Field({ type: 'integer', minimum: 1 }) size!: number;
}

@CustomResource({ group: 'manifests.example.com', version: 'v2', kind: 'Pool', storage: true })
class PoolV2 {
  @Field(() => Spec) spec!: Spec;
}

// Never named by a controller: its CRD version comes with PoolV2's.
@CustomResource({ group: 'manifests.example.com', version: 'v1', kind: 'Pool' })
export class PoolV1 {
  @Field(() => Spec) spec!: Spec;
}

@CustomResource({ group: 'manifests.example.com', version: 'v1', kind: 'Tenant', scope: 'Cluster' })
class Tenant {
  @Field({ required: false }) owner?: string;
}

@CustomResource({ group: 'manifests.example.com', version: 'v1', kind: 'Unused' })
export class Unused {
  @Field({ required: false }) note?: string;
}

const controllers = [
  { resource: PoolV2, owns: [Deployment], watches: [ConfigMap, Tenant], finalizer: true },
  { resource: Tenant, owns: [ConfigMap] },
];

const options = { name: 'pool-operator', namespace: 'pool-system', image: 'registry.example/pool:1.2.3', controllers };

describe('customResourcesOf', () => {
  it('finds the custom kinds the controllers use, with every loaded version of each, and no built-in kinds', () => {
    assert.deepEqual(customResourcesOf(controllers), [PoolV2, Tenant, PoolV1]);
  });
});

describe('operatorManifests', () => {
  const manifests = operatorManifests(options);

  it('writes one CRD per kind used, all versions in it, one of them stored', () => {
    assert.deepEqual(
      manifests.crds.map((c) => [c.metadata.name, c.spec.versions.map((v) => `${v.name}${v.storage ? '*' : ''}`)]),
      [
        ['pools.manifests.example.com', ['v2*', 'v1']],
        ['tenants.manifests.example.com', ['v1*']],
      ],
    );
  });

  it('writes the namespace, a ServiceAccount, a least-privilege ClusterRole bound to it, and a leader-election Role', () => {
    assert.deepEqual(
      manifests.rbac.map((m) => [m.kind, m.metadata.name, m.metadata.namespace]),
      [
        ['Namespace', 'pool-system', undefined],
        ['ServiceAccount', 'pool-operator', 'pool-system'],
        ['ClusterRole', 'pool-operator', undefined],
        ['ClusterRoleBinding', 'pool-operator', undefined],
        ['Role', 'pool-operator-leader-election', 'pool-system'],
        ['RoleBinding', 'pool-operator-leader-election', 'pool-system'],
        ['ClusterRole', 'pool-operator-metrics-reader', undefined],
      ],
    );
    const binding = manifests.rbac[3]!;
    assert.deepEqual(binding.roleRef, {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'pool-operator',
    });
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'pool-operator', namespace: 'pool-system' }]);
    const rules = manifests.rbac[2]!.rules as Array<{ resources: string[]; verbs: string[] }>;
    assert.ok(!rules.some((r) => r.verbs.includes('*') || r.resources.includes('*')), 'no wildcards');
    assert.ok(rules.some((r) => r.resources.includes('pools/finalizers')));
    assert.equal(operatorManifests({ ...options, leaderElection: false }).rbac.length, 5);
  });

  it('writes a Deployment that runs as the ServiceAccount, probed, limited and locked down', () => {
    const [deployment] = manifests.deployment as [Manifest];
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

describe('manifestFiles', () => {
  it('writes YAML streams that parse back to the objects, and a kustomization listing them', () => {
    const manifests = operatorManifests(options);
    const files = manifestFiles(manifests);
    assert.deepEqual(Object.keys(files), ['crds.yaml', 'rbac.yaml', 'deployment.yaml', 'kustomization.yaml']);
    const objects = (file: string) => parseAllDocuments(files[file]!).map((d) => d.toJS() as unknown);
    assert.deepEqual(objects('crds.yaml'), manifests.crds);
    assert.deepEqual(objects('rbac.yaml'), manifests.rbac);
    assert.deepEqual(objects('deployment.yaml'), manifests.deployment);
    assert.deepEqual(parse(files['kustomization.yaml']!), {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['crds.yaml', 'rbac.yaml', 'deployment.yaml'],
    });
  });

  it('leaves out crds.yaml when no custom kind is used', () => {
    const files = manifestFiles(operatorManifests({ ...options, controllers: [{ resource: ConfigMap }] }));
    assert.deepEqual(Object.keys(files), ['rbac.yaml', 'deployment.yaml', 'kustomization.yaml']);
  });
});
