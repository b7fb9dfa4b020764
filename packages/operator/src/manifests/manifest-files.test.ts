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
