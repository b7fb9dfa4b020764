import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap, Deployment } from '../client/kinds.js';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { Field } from '../crd/field.decorator.js';
import { CONVERSION_PATH } from '../webhooks/conversion-webhook.js';
import { CONVERSION_WEBHOOK_PATH, webhookConversion, withWebhookConversion } from './crd-conversion.js';
import { operatorManifests } from './operator-manifests.js';

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

  it('writes a ServiceAccount, a least-privilege ClusterRole bound to it, and a leader-election Role', () => {
    assert.deepEqual(
      manifests.rbac.map((m) => [m.kind, m.metadata.name, m.metadata.namespace]),
      [
        ['ServiceAccount', 'pool-operator', 'pool-system'],
        ['ClusterRole', 'pool-operator', undefined],
        ['ClusterRoleBinding', 'pool-operator', undefined],
        ['Role', 'pool-operator-leader-election', 'pool-system'],
        ['RoleBinding', 'pool-operator-leader-election', 'pool-system'],
        ['ClusterRole', 'pool-operator-storage-migration', undefined],
        ['ClusterRoleBinding', 'pool-operator-storage-migration', undefined],
        ['ClusterRole', 'pool-operator-metrics-auth', undefined],
        ['ClusterRoleBinding', 'pool-operator-metrics-auth', undefined],
        ['ClusterRole', 'pool-operator-metrics-reader', undefined],
      ],
    );
    const binding = manifests.rbac[2]!;
    assert.deepEqual(binding.roleRef, {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'pool-operator',
    });
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'pool-operator', namespace: 'pool-system' }]);
    const rules = manifests.rbac[1]!.rules as Array<{ resources: string[]; verbs: string[] }>;
    assert.ok(!rules.some((r) => r.verbs.includes('*') || r.resources.includes('*')), 'no wildcards');
    assert.ok(rules.some((r) => r.resources.includes('pools/finalizers')));
    assert.equal(operatorManifests({ ...options, leaderElection: false }).rbac.length, 8);
    assert.equal(operatorManifests({ ...options, storageMigration: false }).rbac.length, 8);
    // An operator that watches one namespace has no rights beyond it: no migration, unless asked for.
    const names = (m: ReturnType<typeof operatorManifests>) => m.rbac.map((o) => o.metadata.name);
    assert.ok(
      !names(operatorManifests({ ...options, watchNamespace: 'pools' })).includes('pool-operator-storage-migration'),
    );
    assert.ok(
      names(operatorManifests({ ...options, watchNamespace: 'pools', storageMigration: true })).includes(
        'pool-operator-storage-migration',
      ),
    );
  });

  it('grants the storage-version migration its CRDs by name, their status, and list and patch on their kinds', () => {
    const role = manifests.rbac.find(
      (m) => m.kind === 'ClusterRole' && m.metadata.name === 'pool-operator-storage-migration',
    );
    assert.deepEqual(role?.rules, [
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['pools.manifests.example.com', 'tenants.manifests.example.com'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions/status'],
        resourceNames: ['pools.manifests.example.com', 'tenants.manifests.example.com'],
        verbs: ['patch'],
      },
      { apiGroups: ['manifests.example.com'], resources: ['pools', 'tenants'], verbs: ['list', 'patch'] },
    ]);
    const binding = manifests.rbac.find(
      (m) => m.kind === 'ClusterRoleBinding' && m.metadata.name === 'pool-operator-storage-migration',
    );
    assert.deepEqual(binding?.subjects, [{ kind: 'ServiceAccount', name: 'pool-operator', namespace: 'pool-system' }]);
  });

  it('writes the Namespace only when asked to, apart from the RBAC objects', () => {
    assert.equal(manifests.namespace, undefined);
    const withNamespace = operatorManifests({ ...options, createNamespace: true });
    assert.deepEqual(withNamespace.namespace, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: 'pool-system',
        labels: { 'app.kubernetes.io/name': 'pool-operator', 'app.kubernetes.io/managed-by': 'nestor' },
      },
    });
    assert.deepEqual(withNamespace.rbac, manifests.rbac);
  });
});

describe('operatorManifests: the metrics certificate', () => {
  const kindsOf = (m: ReturnType<typeof operatorManifests>) =>
    (m.metrics ?? []).map((o) => `${o.kind}/${o.metadata.name}`);

  it('is self-signed by the operator unless cert-manager is in use or asked for', () => {
    assert.deepEqual(kindsOf(operatorManifests(options)), ['Service/pool-operator-metrics-service']);
    const asked = operatorManifests({ ...options, metricsCertificates: 'cert-manager' });
    assert.deepEqual(kindsOf(asked), [
      'Service/pool-operator-metrics-service',
      'Issuer/pool-operator-selfsigned-issuer',
      'Certificate/pool-operator-metrics-certs',
    ]);
    assert.match(JSON.stringify(asked.deployment), /"secretName":"pool-operator-metrics-server-cert"/);
  });

  it('comes from cert-manager when the webhooks’ does, from their Issuer', () => {
    const converted = operatorManifests({ ...options, conversions: [PoolV2] });
    assert.deepEqual(kindsOf(converted), [
      'Service/pool-operator-metrics-service',
      'Certificate/pool-operator-metrics-certs',
    ]);
    const selfManaged = operatorManifests({
      ...options,
      conversions: [PoolV2],
      webhooks: { configurations: [], certificates: 'self-managed' },
    });
    assert.deepEqual(kindsOf(selfManaged), ['Service/pool-operator-metrics-service']);
    assert.throws(
      () => operatorManifests({ ...options, metricsPort: 0, metricsCertificates: 'cert-manager' }),
      /needs metrics over HTTPS/,
    );
  });
});

describe('operatorManifests with a conversion webhook', () => {
  const manifests = operatorManifests(options);

  it('gives the CRD of a kind with a converter conversion: Webhook through the webhook Service at /convert', () => {
    const converted = operatorManifests({ ...options, conversions: [PoolV2] });
    const [pool, tenant] = converted.crds;
    assert.deepEqual(pool!.spec.conversion, {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: {
          service: { name: 'pool-operator-webhook-service', namespace: 'pool-system', path: '/convert', port: 443 },
        },
      },
    });
    assert.equal(tenant!.spec.conversion, undefined, 'no converter: None');
    assert.equal(
      manifests.crds[0]!.spec.conversion,
      undefined,
      'without conversions, the multi-version CRD keeps None',
    );
    assert.equal(CONVERSION_WEBHOOK_PATH, CONVERSION_PATH, 'the path the CRD names is the one served');
  });

  it('takes the Service from the options', () => {
    const converted = operatorManifests({
      ...options,
      conversions: [PoolV2],
      webhookService: { name: 'hooks', namespace: 'elsewhere', port: 8443 },
    });
    const webhook = converted.crds[0]!.spec.conversion as { webhook: { clientConfig: unknown } };
    assert.deepEqual(webhook.webhook.clientConfig, {
      service: { name: 'hooks', namespace: 'elsewhere', path: '/convert', port: 8443 },
    });
  });

  it('points a conversion at a URL for a local run, its CA as caBundle, refusing what the API server would', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const base64 = Buffer.from(pem).toString('base64');
    const expected = {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: { url: `https://127.0.0.1:9443${CONVERSION_WEBHOOK_PATH}`, caBundle: base64 },
      },
    };
    assert.deepEqual(webhookConversion({ url: 'https://127.0.0.1:9443/', caBundle: pem }), expected);
    assert.deepEqual(webhookConversion({ url: 'https://127.0.0.1:9443', caBundle: base64 }), expected);
    assert.deepEqual(webhookConversion({ url: 'https://127.0.0.1:9443' }), {
      ...expected,
      webhook: { ...expected.webhook, clientConfig: { url: 'https://127.0.0.1:9443/convert' } },
    });
    assert.throws(
      () => webhookConversion({ url: 'http://127.0.0.1:9443' }),
      /must be https:\/\/<host>:<port>.*TLS only/,
    );
    assert.throws(() => webhookConversion({ url: '127.0.0.1:9443' }), /is not a URL: give https:\/\/<host>:<port>/);
    assert.throws(
      () => webhookConversion({ url: 'https://127.0.0.1:9443', caBundle: 'not a certificate' }),
      /caBundle is neither a PEM certificate nor base64 of one/,
    );
  });

  it('refuses a converter for a CRD it does not write', () => {
    assert.throws(
      () => withWebhookConversion(manifests.crds, ['nothing.example.com'], { name: 's', namespace: 'n' }),
      /a converter is declared for nothing.example.com, but no CRD of that name is written/,
    );
  });
});
