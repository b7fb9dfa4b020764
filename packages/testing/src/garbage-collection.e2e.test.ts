// The CRDs given to TestEnvironment.start are installed before kube-controller-manager, so
// its garbage collector knows their kinds from the start: an object owned by a custom
// resource, and a custom resource owned by a built-in object, go with their owner at once.
// Installed after it started, they would wait for its discovery sync and the retries of
// what it could not resolve, about 41 s (docs/testing.md; bench/gc-delay.mjs measures both
// cases). The fake node makes the start wait after kube-controller-manager is up: CRDs
// installed once start() was done came too late for it, and this test failed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CustomResourceDefinition } from './crds.js';
import { TestEnvironment } from './environment.js';
import { waitFor } from './wait-for.js';

const GROUP = 'gc.nestor.dev';
const CRD: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

interface Meta {
  metadata: { name: string; uid: string };
}

let env: TestEnvironment;

before(async () => {
  env = await TestEnvironment.start({ useExistingCluster: false, controllerManager: true, nodes: 1, crds: [CRD] });
});

after(async () => {
  await env?.stop();
});

describe('a control plane started with crds', () => {
  it('garbage-collects through the kinds given at once, both ways', async (t) => {
    const widgets = `/apis/${GROUP}/v1/namespaces/default/widgets`;
    const configMaps = '/api/v1/namespaces/default/configmaps';
    const ref = (apiVersion: string, kind: string, owner: Meta) => [
      { apiVersion, kind, name: owner.metadata.name, uid: owner.metadata.uid },
    ];
    // A Widget owning a ConfigMap, and a ConfigMap owning a Widget.
    const widget = await env.client.request<Meta>('POST', widgets, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name: 'owner' },
    });
    await env.client.request('POST', configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owned', ownerReferences: ref(`${GROUP}/v1`, 'Widget', widget) },
    });
    const configMap = await env.client.request<Meta>('POST', configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owner' },
    });
    await env.client.request('POST', widgets, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name: 'owned', ownerReferences: ref('v1', 'ConfigMap', configMap) },
    });

    const deleted = Date.now();
    await env.client.request('DELETE', `${widgets}/owner`);
    await env.client.request('DELETE', `${configMaps}/owner`);
    const gone = async (path: string) => (await env.client.raw('GET', path)).status === 404;
    // Well inside the 41 s a kind installed after kube-controller-manager waits.
    await waitFor(async () => (await gone(`${configMaps}/owned`)) && (await gone(`${widgets}/owned`)), {
      timeoutMs: 15_000,
      what: 'the garbage collector to delete what the deleted owners owned',
    });
    t.diagnostic(`both dependents gone ${Date.now() - deleted} ms after their owners' deletion`);
    assert.ok(await gone(`${widgets}/owner`));
  });
});
