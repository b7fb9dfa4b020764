import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { ConfigMap } from '../client/kinds.js';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { Field } from '../crd/field.decorator.js';
import { manifestFiles } from './manifest-files.js';
import { operatorManifests } from './operator-manifests.js';

@CustomResource({ group: 'files.example.com', version: 'v1', kind: 'Pool' })
class Pool {
  @Field({ required: false }) size?: number;
}

const options = {
  name: 'pool-operator',
  namespace: 'pool-system',
  image: 'registry.example/pool:1.2.3',
  controllers: [{ resource: Pool, owns: [ConfigMap] }],
};

type Kind = { kind: string };
const objectsIn = (files: Record<string, string>, path: string) =>
  parseAllDocuments(files[path]!).map((d) => d.toJS() as unknown);
const resourcesOf = (files: Record<string, string>, folder: string) =>
  (parse(files[`${folder}/kustomization.yaml`]!) as { resources: string[] }).resources;
/** What `kubectl delete -k <folder>` would delete. */
const kindsIn = (files: Record<string, string>, folder: string) =>
  resourcesOf(files, folder).flatMap((file) => objectsIn(files, `${folder}/${file}`).map((o) => (o as Kind).kind));

describe('manifestFiles', () => {
  it('writes the CRDs and the operator as two kustomizations, and a README, and no Namespace', () => {
    const manifests = operatorManifests(options);
    const files = manifestFiles(manifests);
    assert.deepEqual(Object.keys(files), [
      'crds/crds.yaml',
      'crds/kustomization.yaml',
      'operator/rbac.yaml',
      'operator/deployment.yaml',
      'operator/metrics.yaml',
      'operator/kustomization.yaml',
      'network-policy/allow-metrics-traffic.yaml',
      'network-policy/kustomization.yaml',
      'README.md',
    ]);
    assert.deepEqual(objectsIn(files, 'crds/crds.yaml'), manifests.crds);
    assert.deepEqual(objectsIn(files, 'network-policy/allow-metrics-traffic.yaml'), manifests.networkPolicies);
    assert.deepEqual(objectsIn(files, 'operator/metrics.yaml'), manifests.metrics);
    assert.deepEqual(objectsIn(files, 'operator/rbac.yaml'), manifests.rbac);
    assert.deepEqual(objectsIn(files, 'operator/deployment.yaml'), manifests.deployment);
    assert.deepEqual(parse(files['crds/kustomization.yaml']!), {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['crds.yaml'],
    });
    assert.deepEqual(resourcesOf(files, 'operator'), ['rbac.yaml', 'deployment.yaml', 'metrics.yaml']);
    assert.ok(!Object.values(files).some((text) => /kind: Namespace/.test(text)), 'no Namespace anywhere');
  });

  it("keeps the CRDs and the Namespace out of the operator's kustomization, so deleting it leaves them", () => {
    const files = manifestFiles(operatorManifests({ ...options, createNamespace: true }));
    assert.deepEqual(kindsIn(files, 'operator'), [
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'ClusterRole',
      'ClusterRoleBinding',
      'ClusterRole',
      'ClusterRoleBinding',
      'ClusterRole',
      'Deployment',
      'Service',
    ]);
    assert.deepEqual(kindsIn(files, 'crds'), ['CustomResourceDefinition']);
    assert.deepEqual(kindsIn(files, 'namespace'), ['Namespace']);
    assert.match(files['namespace/kustomization.yaml']!, /asked for \(--create-namespace\)/);
    assert.match(files['namespace/kustomization.yaml']!, /Deleting it deletes everything in it/);
    assert.match(files['crds/kustomization.yaml']!, /Deleting them deletes every custom resource/);
  });

  it('says in the README the order to apply the folders in, and how to uninstall', () => {
    const steps = (readme: string, section: string) =>
      readme
        .split(`## ${section}`)[1]!
        .split('\n## ')[0]!
        .split('\n')
        .filter((line) => /^\d+\. /.test(line));
    const readme = manifestFiles(operatorManifests({ ...options, createNamespace: true }))['README.md']!;
    assert.deepEqual(
      steps(readme, 'Install').map((step) => /`kubectl apply -k ([\w-]+)`/.exec(step)?.[1]),
      ['crds', 'namespace', 'operator', 'network-policy'],
    );
    assert.deepEqual(
      steps(readme, 'Uninstall').map((step) => /`kubectl delete -k ([\w-]+)`/.exec(step)?.[1]),
      [undefined, 'operator', 'network-policy', 'crds', 'namespace'],
    );
    assert.match(readme, /finalizer/);

    const withoutNamespace = manifestFiles(operatorManifests(options))['README.md']!;
    assert.match(steps(withoutNamespace, 'Install')[1]!, /`kubectl create namespace pool-system`/);
    assert.doesNotMatch(withoutNamespace, /delete -k namespace/);
  });

  it('leaves out the crds folder when no custom kind is used', () => {
    const files = manifestFiles(operatorManifests({ ...options, controllers: [{ resource: ConfigMap }] }));
    assert.deepEqual(Object.keys(files), [
      'operator/rbac.yaml',
      'operator/deployment.yaml',
      'operator/metrics.yaml',
      'operator/kustomization.yaml',
      'network-policy/allow-metrics-traffic.yaml',
      'network-policy/kustomization.yaml',
      'README.md',
    ]);
    assert.doesNotMatch(files['README.md']!, /-k crds/);
  });
});
