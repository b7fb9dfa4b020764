import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { ConfigMap } from '../client/kinds.js';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { Field } from '../crd/field.decorator.js';
import { manifestFiles } from './manifest-files.js';
import type { Manifest } from './manifest.js';
import { networkPolicies } from './network-policy-manifests.js';
import { operatorManifests } from './operator-manifests.js';

@CustomResource({ group: 'policy.example.com', version: 'v2', kind: 'Pool' })
class PoolV2 {
  @Field({ required: false }) size?: number;
}

@CustomResource({ group: 'policy.example.com', version: 'v1', kind: 'Pool', storage: false })
export class PoolV1 {
  @Field({ required: false }) size?: number;
}

const labels = { 'app.kubernetes.io/name': 'pool-operator', 'app.kubernetes.io/managed-by': 'nestor' };
const base = { name: 'pool-operator', namespace: 'pool-system' };
const options = { ...base, image: 'pool:1', controllers: [{ resource: PoolV2, owns: [ConfigMap] }] };

type Policy = {
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    ingress: { from?: unknown[]; ports: { port: number }[] }[];
  };
};
type Pod = {
  metadata: { labels: Record<string, string> };
  spec: { containers: { ports: { name: string; containerPort: number }[] }[] };
};
const podOf = (deployment: Manifest) => (deployment.spec as { template: Pod }).template;
const policy = (manifests: { networkPolicies?: Manifest[] }, component: string) =>
  manifests.networkPolicies?.find((p) => p.metadata.labels?.['app.kubernetes.io/component'] === component) as
    (Manifest & Policy) | undefined;

describe('networkPolicies', () => {
  it('opens /metrics to namespaces labelled metrics=enabled, and the webhook port to all, as kubebuilder', () => {
    assert.deepEqual(networkPolicies({ ...base, metricsPort: 8443, webhookPort: 9443 }), [
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: {
          name: 'pool-operator-allow-metrics-traffic',
          namespace: 'pool-system',
          labels: { ...labels, 'app.kubernetes.io/component': 'metrics' },
        },
        spec: {
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'pool-operator' } },
          policyTypes: ['Ingress'],
          ingress: [
            {
              from: [{ namespaceSelector: { matchLabels: { metrics: 'enabled' } } }],
              ports: [{ port: 8443, protocol: 'TCP' }],
            },
          ],
        },
      },
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: {
          name: 'pool-operator-allow-webhook-traffic',
          namespace: 'pool-system',
          labels: { ...labels, 'app.kubernetes.io/component': 'webhook' },
        },
        spec: {
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'pool-operator' } },
          policyTypes: ['Ingress'],
          ingress: [{ ports: [{ port: 9443, protocol: 'TCP' }] }],
        },
      },
    ]);
  });

  it('lets in the namespaces of the scrapers bound to read /metrics, each once', () => {
    const [metrics] = networkPolicies({
      ...base,
      metricsPort: 8443,
      metricsReaderNamespaces: ['monitoring', 'obs', 'monitoring'],
    }) as (Manifest & Policy)[];
    assert.deepEqual(metrics!.spec.ingress[0]!.from, [
      { namespaceSelector: { matchLabels: { metrics: 'enabled' } } },
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'obs' } } },
    ]);
  });

  it('writes no policy for a port the operator does not serve', () => {
    assert.deepEqual(networkPolicies(base), []);
    assert.deepEqual(
      networkPolicies({ ...base, webhookPort: 9443 }).map((p) => p.metadata.name),
      ['pool-operator-allow-webhook-traffic'],
    );
  });
});

describe('operatorManifests and NetworkPolicies', () => {
  it('selects the Deployment’s pods and opens the ports their containers serve', () => {
    const manifests = operatorManifests({
      ...options,
      conversions: [PoolV2],
      metricsPort: 8080,
      metricsReaders: ['monitoring/prometheus-k8s'],
    });
    const pod = podOf(manifests.deployment[0]!);
    const ports = Object.fromEntries(pod.spec.containers[0]!.ports.map((p) => [p.name, p.containerPort]));
    const metrics = policy(manifests, 'metrics')!;
    const webhook = policy(manifests, 'webhook')!;
    for (const { spec } of [metrics, webhook]) {
      for (const [key, value] of Object.entries(spec.podSelector.matchLabels))
        assert.equal(pod.metadata.labels[key], value, `the pods carry ${key}=${value}`);
    }
    assert.deepEqual(metrics.spec.ingress[0]!.ports[0]!.port, ports['metrics']);
    assert.deepEqual(webhook.spec.ingress[0]!.ports[0]!.port, ports['webhook-server']);
    assert.match(JSON.stringify(metrics.spec.ingress[0]!.from), /"kubernetes.io\/metadata.name":"monitoring"/);
  });

  it('writes none without metrics or webhooks, or when turned off', () => {
    assert.equal(operatorManifests({ ...options, metricsPort: 0 }).networkPolicies, undefined);
    assert.equal(operatorManifests({ ...options, networkPolicy: false }).networkPolicies, undefined);
    const webhookOnly = operatorManifests({ ...options, metricsPort: 0, conversions: [PoolV2] });
    assert.deepEqual(
      webhookOnly.networkPolicies?.map((p) => p.metadata.name),
      ['pool-operator-allow-webhook-traffic'],
    );
  });

  it('puts them in a network-policy kustomization of their own that says why the webhook port is open to all', () => {
    const files = manifestFiles(operatorManifests({ ...options, conversions: [PoolV2] }));
    assert.deepEqual(
      Object.keys(files).filter((path) => path.startsWith('network-policy/')),
      [
        'network-policy/allow-metrics-traffic.yaml',
        'network-policy/allow-webhook-traffic.yaml',
        'network-policy/kustomization.yaml',
      ],
    );
    const kustomization = files['network-policy/kustomization.yaml']!;
    assert.deepEqual((parse(kustomization) as { resources: string[] }).resources, [
      'allow-metrics-traffic.yaml',
      'allow-webhook-traffic.yaml',
    ]);
    assert.match(kustomization, /# Webhooks: from anywhere, to the webhook port only\. The API server/);
    assert.ok(!Object.keys(files).some((path) => path.startsWith('operator/') && /NetworkPolicy/.test(files[path]!)));
    assert.match(files['README.md']!, /`kubectl label namespace <namespace> metrics=enabled`/);
    const none = manifestFiles(operatorManifests({ ...options, networkPolicy: false }));
    assert.ok(!Object.keys(none).some((path) => path.startsWith('network-policy/')));
    assert.doesNotMatch(none['README.md']!, /network-policy/);
  });
});
