import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments, parse } from 'yaml';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { Field } from '../crd/field.decorator.js';
import type { Manifest } from './manifest.js';
import { manifestFiles } from './manifest-files.js';
import { operatorManifests } from './operator-manifests.js';
import { webhookManifests, type WebhookConfigurationManifest } from './webhook-manifests.js';

class Spec {
  @Field({ type: 'integer', minimum: 1 }) size!: number;
}

@CustomResource({ group: 'hooks.example.com', version: 'v1', kind: 'Gate' })
class Gate {
  @Field(() => Spec) spec!: Spec;
}

const service = { namespace: 'gate-system', name: 'gate-operator-webhook-service' };
/** What webhookConfigurationsOf writes for a kind with a validator and a defaulter. */
const configurations: WebhookConfigurationManifest[] = (['Validating', 'Mutating'] as const).map((type) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: `${type}WebhookConfiguration`,
  metadata: { name: 'gate-operator-webhooks' },
  webhooks: [
    {
      name: `${type === 'Validating' ? 'validate' : 'mutate'}-hooks-example-com-v1-gate.nestor.dev`,
      clientConfig: {
        service: { ...service, path: `/${type === 'Validating' ? 'validate' : 'mutate'}-hooks-example-com-v1-gate` },
      },
    },
  ],
}));

const base = {
  name: 'gate-operator',
  namespace: 'gate-system',
  image: 'registry.example/gate:1',
  controllers: [{ resource: Gate }],
};

const byKind = (objects: readonly Manifest[] | undefined, kind: string) =>
  objects?.filter((o) => o.kind === kind) ?? [];
const container = (deployment: Manifest) =>
  (deployment as unknown as { spec: { template: { spec: { containers: Record<string, unknown[]>[] } } } }).spec.template
    .spec.containers[0]!;

describe('webhook manifests with cert-manager (the default)', () => {
  const manifests = operatorManifests({ ...base, webhooks: { configurations } });

  it('puts a Service in front of port 9443, as kubebuilder’s webhook-service', () => {
    const [svc] = byKind(manifests.webhooks, 'Service');
    assert.deepEqual(svc, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'gate-operator-webhook-service',
        namespace: 'gate-system',
        labels: { 'app.kubernetes.io/name': 'gate-operator', 'app.kubernetes.io/managed-by': 'nestor' },
      },
      spec: {
        selector: { 'app.kubernetes.io/name': 'gate-operator' },
        ports: [{ name: 'webhook', port: 443, targetPort: 'webhook-server', protocol: 'TCP' }],
      },
    });
  });

  it('writes a self-signed Issuer and a Certificate for the Service’s names, into kubebuilder’s Secret', () => {
    assert.deepEqual(byKind(manifests.webhooks, 'Issuer')[0]?.spec, { selfSigned: {} });
    const [certificate] = byKind(manifests.webhooks, 'Certificate');
    assert.equal(certificate?.apiVersion, 'cert-manager.io/v1');
    assert.equal(certificate?.metadata.name, 'gate-operator-serving-cert');
    assert.deepEqual(certificate?.spec, {
      dnsNames: [
        'gate-operator-webhook-service.gate-system.svc',
        'gate-operator-webhook-service.gate-system.svc.cluster.local',
      ],
      issuerRef: { kind: 'Issuer', name: 'gate-operator-selfsigned-issuer' },
      secretName: 'gate-operator-webhook-server-cert',
    });
  });

  it('annotates both configurations for cainjector, keeping their Service clientConfig', () => {
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const [configuration] = byKind(manifests.webhooks, kind);
      assert.deepEqual(configuration?.metadata.annotations, {
        'cert-manager.io/inject-ca-from': 'gate-system/gate-operator-serving-cert',
      });
      const [webhook] = configuration!.webhooks as { clientConfig: { service: { name: string } } }[];
      assert.equal(webhook!.clientConfig.service.name, 'gate-operator-webhook-service');
    }
  });

  it('gives the Deployment the webhook port and the Secret at /tmp/k8s-webhook-server/serving-certs', () => {
    const main = container(manifests.deployment[0]!);
    assert.deepEqual(main.ports!.at(-1), { name: 'webhook-server', containerPort: 9443, protocol: 'TCP' });
    assert.deepEqual(main.volumeMounts!.at(-1), {
      name: 'webhook-certs',
      mountPath: '/tmp/k8s-webhook-server/serving-certs',
      readOnly: true,
    });
    const volumes = (manifests.deployment[0] as unknown as { spec: { template: { spec: { volumes: unknown[] } } } })
      .spec.template.spec.volumes;
    assert.deepEqual(volumes.at(-1), {
      name: 'webhook-certs',
      secret: { secretName: 'gate-operator-webhook-server-cert' },
    });
    assert.equal(
      (main.env as { name: string }[]).some((e) => e.name.startsWith('WEBHOOK_')),
      false,
      'files are the default: nothing to set',
    );
    assert.equal(manifests.rbac.length, operatorManifests(base).rbac.length, 'no RBAC for certificates');
  });

  it('annotates the CRDs that convert through the webhook, and only those', () => {
    const [gate] = operatorManifests(base).crds;
    const converting = { ...gate!, spec: { ...gate!.spec, conversion: { strategy: 'Webhook' } } };
    const other = { ...gate!, metadata: { name: 'others.hooks.example.com' } };
    const result = webhookManifests(base, [converting, other] as never, operatorManifests(base).deployment[0]!, {
      configurations,
    });
    assert.deepEqual(result.crds[0]!.metadata.annotations, {
      'cert-manager.io/inject-ca-from': 'gate-system/gate-operator-serving-cert',
    });
    assert.equal(result.crds[1]!.metadata.annotations, undefined);
  });

  it('writes them to operator/webhooks.yaml and operator/certificates.yaml, listed in its kustomization', () => {
    const files = manifestFiles(manifests);
    const kustomization = parse(files['operator/kustomization.yaml']!) as { resources: string[] };
    assert.deepEqual(kustomization.resources, [
      'rbac.yaml',
      'deployment.yaml',
      'metrics.yaml',
      'webhooks.yaml',
      'certificates.yaml',
    ]);
    assert.deepEqual(
      parseAllDocuments(files['operator/webhooks.yaml']!).map((d) => (d.toJS() as Manifest).kind),
      ['Service', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'],
    );
    assert.deepEqual(
      parseAllDocuments(files['operator/certificates.yaml']!).map((d) => {
        const object = d.toJS() as Manifest;
        return `${object.kind}/${object.metadata.name}`;
      }),
      // cert-manager is in use: the metrics certificate comes from the same Issuer.
      [
        'Issuer/gate-operator-selfsigned-issuer',
        'Certificate/gate-operator-serving-cert',
        'Certificate/gate-operator-metrics-certs',
      ],
    );
    assert.match(files['operator/kustomization.yaml']!, /certificates.yaml needs cert-manager/);
    assert.match(files['README.md']!, /cert-manager must run in the cluster/);
  });
});

describe('webhook manifests, self-managed', () => {
  const manifests = operatorManifests({ ...base, webhooks: { configurations, certificates: 'self-managed' } });

  it('writes no cert-manager objects or annotations', () => {
    assert.deepEqual(
      manifests.webhooks?.map((o) => o.kind),
      ['Service', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'],
    );
    assert.ok(manifests.webhooks?.every((o) => o.metadata.annotations === undefined));
    assert.equal('operator/certificates.yaml' in manifestFiles(manifests), false);
  });

  it('grants create on Secrets, and get and update on its own only; get and patch on its configurations and converting CRDs by name', () => {
    const [role] = byKind(manifests.rbac, 'Role').filter(
      (r) => r.metadata.name === 'gate-operator-webhook-certificate',
    );
    assert.equal(role?.metadata.namespace, 'gate-system');
    assert.deepEqual(role?.rules, [
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['gate-operator-webhook-server-cert'],
        verbs: ['get', 'update'],
      },
    ]);
    const [gate] = operatorManifests(base).crds;
    const converting = { ...gate!, spec: { ...gate!.spec, conversion: { strategy: 'Webhook' } } };
    const result = webhookManifests(base, [converting] as never, operatorManifests(base).deployment[0]!, {
      configurations,
      certificates: 'self-managed',
    });
    const clusterRole = result.rbac.find((r) => r.kind === 'ClusterRole');
    assert.deepEqual(clusterRole?.rules, [
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
        resourceNames: ['gate-operator-webhooks'],
        verbs: ['get', 'patch'],
      },
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['gates.hooks.example.com'],
        verbs: ['get', 'patch'],
      },
    ]);
    for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
      const binding = result.rbac.find((r) => r.kind === kind) as { subjects: unknown[] } | undefined;
      assert.deepEqual(binding?.subjects, [
        { kind: 'ServiceAccount', name: 'gate-operator', namespace: 'gate-system' },
      ]);
    }
    const env = container(result.deployment).env as { name: string; value?: string }[];
    assert.deepEqual(
      env.filter((e) => e.name.startsWith('WEBHOOK_')),
      [
        { name: 'WEBHOOK_CERTIFICATES', value: 'self-managed' },
        { name: 'WEBHOOK_SECRET_NAME', value: 'gate-operator-webhook-server-cert' },
        { name: 'WEBHOOK_SERVICE_NAME', value: 'gate-operator-webhook-service' },
        { name: 'WEBHOOK_CONFIGURATION_NAME', value: 'gate-operator-webhooks' },
        { name: 'WEBHOOK_CONVERSION_CRDS', value: 'gates.hooks.example.com' },
      ],
    );
  });

  it('exposes the port, mounts nothing, and leaves the operator without webhooks as it was', () => {
    const main = container(manifests.deployment[0]!);
    assert.deepEqual(main.ports!.at(-1), { name: 'webhook-server', containerPort: 9443, protocol: 'TCP' });
    assert.ok(!(main.volumeMounts as { name: string }[]).some((m) => m.name === 'webhook-certs'));
    const without = operatorManifests(base);
    assert.equal(without.webhooks, undefined);
    assert.deepEqual(operatorManifests({ ...base, webhooks: { configurations: [] } }), without);
  });
});

describe('webhook manifests for conversion alone', () => {
  it('writes the Service and the certificate for an operator that only converts, and annotates its CRD', () => {
    const manifests = operatorManifests({ ...base, conversions: [Gate] });
    assert.deepEqual(
      manifests.webhooks?.map((o) => `${o.kind} ${o.metadata.name}`),
      [
        'Service gate-operator-webhook-service',
        'Issuer gate-operator-selfsigned-issuer',
        'Certificate gate-operator-serving-cert',
      ],
    );
    const [crd] = manifests.crds;
    assert.equal(crd!.spec.conversion?.strategy, 'Webhook');
    assert.deepEqual(crd!.metadata.annotations, {
      'cert-manager.io/inject-ca-from': 'gate-system/gate-operator-serving-cert',
    });
    const selfManaged = operatorManifests({
      ...base,
      conversions: [Gate],
      webhooks: { configurations: [], certificates: 'self-managed' },
    });
    const clusterRole = selfManaged.rbac.find((r) => r.metadata.name === 'gate-operator-webhook-ca-injector');
    assert.deepEqual(clusterRole?.rules, [
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['gates.hooks.example.com'],
        verbs: ['get', 'patch'],
      },
    ]);
  });
});

describe("webhook manifests that follow the module's webhook server", () => {
  const renamed = configurations.map((c) => ({ ...c, metadata: { name: 'gate-hooks' } }));

  it('exposes its port and mounts its certificate where and as it reads it', () => {
    const { deployment, networkPolicies } = operatorManifests({
      ...base,
      webhooks: {
        configurations,
        server: { port: 10443, certDir: '/certs', certName: 'cert.pem', keyName: 'key.pem' },
      },
    });
    const text = JSON.stringify(deployment[0]);
    assert.ok(text.includes('{"name":"webhook-server","containerPort":10443,"protocol":"TCP"}'));
    assert.ok(text.includes('{"name":"webhook-certs","mountPath":"/certs","readOnly":true}'));
    assert.ok(
      text.includes('"items":[{"key":"tls.crt","path":"cert.pem"},{"key":"tls.key","path":"key.pem"}]'),
      'cert-manager writes tls.crt and tls.key: projected to the names the module reads',
    );
    assert.match(JSON.stringify(networkPolicies), /"port":10443/);
  });

  it('names the Secret, Service and configurations as its self-managed certificate does', () => {
    const { deployment, rbac, webhooks } = operatorManifests({
      ...base,
      webhookService: { namespace: 'gate-system', name: 'gate-svc', port: 443 },
      webhooks: {
        configurations: renamed,
        certificates: 'self-managed',
        server: { configurationName: 'gate-hooks', serviceName: 'gate-svc', secretName: 'gate-tls' },
      },
    });
    const env = JSON.stringify(container(deployment[0]!).env);
    assert.match(env, /"WEBHOOK_CONFIGURATION_NAME","value":"gate-hooks"/);
    assert.match(env, /"WEBHOOK_SERVICE_NAME","value":"gate-svc"/);
    assert.match(env, /"WEBHOOK_SECRET_NAME","value":"gate-tls"/);
    assert.deepEqual(
      byKind(webhooks, 'Service').map((s) => s.metadata.name),
      ['gate-svc'],
    );
    const rules = JSON.stringify(rbac);
    assert.match(rules, /"resourceNames":\["gate-tls"\]/);
    assert.match(rules, /"resourceNames":\["gate-hooks"\]/);
  });

  it('refuses what the operator would not match: another configuration name, another Service, no port', () => {
    assert.throws(
      () =>
        webhookManifests(base, [], operatorManifests(base).deployment[0]!, {
          configurations,
          server: { configurationName: 'gate-hooks' },
        }),
      /ValidatingWebhookConfiguration is named gate-operator-webhooks, but the operator's webhook configuration name is gate-hooks/,
    );
    assert.throws(
      () =>
        webhookManifests({ ...base, service: { name: 'other' } }, [], operatorManifests(base).deployment[0]!, {
          configurations,
          server: { serviceName: 'gate-svc' },
        }),
      /the webhook Service is other, but the operator's certificate names gate-svc/,
    );
    assert.throws(
      () => operatorManifests({ ...base, webhooks: { configurations, server: { port: 0 } } }),
      /the webhook server's port is 0 \(webhooks.port\), but the operator has webhooks or conversions to serve/,
    );
  });
});
