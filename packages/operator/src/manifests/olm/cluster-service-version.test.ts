import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CustomResource } from '../../crd/custom-resource.decorator.js';
import { Field } from '../../crd/field.decorator.js';
import { operatorManifests } from '../operator-manifests.js';
import { clusterServiceVersion, type OlmBundleMetadata } from './cluster-service-version.js';
import { displayNameOf } from './crd-descriptors.js';
import { installStrategy } from './install-strategy.js';
import { webhookDefinitions } from './webhook-definitions.js';

class GateSpec {
  @Field({ type: 'integer', minimum: 1, description: 'How many.' }) replicaCount!: number;
  @Field({ enum: ['open', 'shut'] }) state!: string;
}

@CustomResource({ group: 'hooks.example.com', version: 'v1', kind: 'Gate' })
class Gate {
  @Field(() => GateSpec) spec!: GateSpec;
}

const metadata: OlmBundleMetadata = {
  packageName: 'gate-operator',
  version: '1.0.0',
  displayName: 'Gate Operator',
  description: 'Gates.',
  provider: { name: 'Example' },
  maintainers: [{ name: 'A', email: 'a@example.com' }],
  icon: { base64data: 'PHN2Zy8+', mediatype: 'image/svg+xml' },
  capabilities: 'Basic Install',
  channels: ['stable'],
  minKubeVersion: '1.31.0',
  kinds: { Gate: { description: 'A gate.' } },
};

const controllers = [{ resource: Gate }];
const base = { name: 'gate-operator', namespace: 'gate-system', image: 'registry.example/gate:1', controllers };

describe('clusterServiceVersion', () => {
  it('names fields as the console shows them, and gives each a widget for its type', () => {
    assert.equal(displayNameOf('replicaCount'), 'Replica Count');
    assert.equal(displayNameOf('TLSConfig'), 'TLS Config');
    const { csv } = clusterServiceVersion(operatorManifests(base), metadata, base);
    const [owned] = (csv.spec as { customresourcedefinitions: { owned: Record<string, unknown>[] } })
      .customresourcedefinitions.owned;
    assert.deepEqual(owned!.specDescriptors, [
      {
        path: 'replicaCount',
        displayName: 'Replica Count',
        description: 'How many.',
        'x-descriptors': ['urn:alm:descriptor:com.tectonic.ui:number'],
      },
      {
        path: 'state',
        displayName: 'State',
        'x-descriptors': [
          'urn:alm:descriptor:com.tectonic.ui:select:open',
          'urn:alm:descriptor:com.tectonic.ui:select:shut',
        ],
      },
    ]);
  });

  it('names the operator namespace of the Deployment from its pod: OLM picks the namespace', () => {
    const { csv } = clusterServiceVersion(operatorManifests(base), metadata, base);
    const text = JSON.stringify((csv.spec as { install: unknown }).install);
    assert.doesNotMatch(text, /gate-system/);
    assert.match(
      text,
      /"name":"LEADER_ELECTION_NAMESPACE","valueFrom":\{"fieldRef":\{"fieldPath":"metadata.namespace"\}\}/,
    );
  });

  it('refuses rights in a namespace a CSV cannot grant, saying what to do', () => {
    const rbac = [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'gate-operator-watches', namespace: 'elsewhere' },
        rules: [],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'gate-operator-watches', namespace: 'elsewhere' },
        roleRef: { kind: 'Role', name: 'gate-operator-watches' },
        subjects: [{ kind: 'ServiceAccount', name: 'gate-operator', namespace: 'gate-system' }],
      },
    ];
    assert.throws(
      () => installStrategy({ name: 'gate-operator', namespace: 'gate-system' }, [], rbac),
      /rights in the namespace elsewhere .* drop the @Watches or @Controller namespace elsewhere, or install .* --out or --helm/,
    );
  });

  it('says a conversion webhook once, for every converted CRD, and refuses it for one namespace', () => {
    const manifests = operatorManifests({
      ...base,
      conversions: [Gate],
      webhooks: { configurations: [], certificates: 'olm' },
    });
    const [conversion] = webhookDefinitions({ name: 'gate-operator', webhookPort: 9443 }, [], manifests.crds);
    assert.deepEqual(
      { type: conversion!.type, path: conversion!.webhookPath, crds: conversion!.conversionCRDs },
      { type: 'ConversionWebhook', path: '/convert', crds: ['gates.hooks.example.com'] },
    );
    // OLM's own webhook Service and certificate: nothing of cert-manager's in the objects.
    assert.deepEqual(
      (manifests.webhooks ?? []).map((object) => object.kind),
      ['Service'],
    );
    assert.throws(
      () => clusterServiceVersion(manifests, metadata, { ...base, watchNamespace: 'gates' }),
      /only in AllNamespaces mode: drop --watch-namespace/,
    );
  });
});
