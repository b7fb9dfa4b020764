import { customResourcesOf } from '../crd/controller-resources.js';
import { customResourceDefinitions, type GeneratedCustomResourceDefinition } from '../crd/crd-generator.js';
import { allVersionsOf, getCustomResourceMetadata } from '../crd/custom-resource.decorator.js';
import type { ClassType } from '../crd/field.decorator.js';
import { hasWebhookConversion, withWebhookConversion, type WebhookServiceReference } from './crd-conversion.js';
import { operatorDeployment, type OperatorDeploymentOptions } from './deployment.js';
import { operatorLabels, type Manifest } from './manifest.js';
import { metricsManifests, metricsNames } from './metrics-manifests.js';
import { networkPolicies } from './network-policy-manifests.js';
import { operatorRbac } from './operator-rbac.js';
import { storageMigrationRules } from './storage-migration-rbac.js';
import { resolveOperatorSettings } from './operator-settings.js';
import type { ControllerAccess, PolicyRule } from './rbac.js';
import { memberRbac } from './member-rbac.js';
import { WEBHOOK_PORT, webhookManifests, webhookNames, type WebhookManifestOptions } from './webhook-manifests.js';

export interface OperatorManifestOptions extends OperatorDeploymentOptions {
  controllers: readonly ControllerAccess[];
  /**
   * What the controllers need in each member cluster of a fleet (ScannedController.members):
   * written as `members`, to apply to every member.
   */
  members?: readonly ControllerAccess[];
  /** Rights the fleet's cluster providers need in the operator's cluster (`ClusterProvider.permissions()`). */
  fleet?: ReadonlyArray<{ namespace?: string; rules: PolicyRule[] }>;
  /** More `@CustomResource` classes to write CRDs for, beyond those the controllers use. */
  customResources?: readonly ClassType[];
  /**
   * A Prometheus Operator ServiceMonitor for the metrics Service (default false): it needs
   * the Prometheus Operator's CRDs in the cluster.
   */
  serviceMonitor?: boolean;
  /**
   * ServiceAccounts (`namespace/name`, e.g. `monitoring/prometheus-k8s`) bound to the
   * metrics-reader ClusterRole, so that they may scrape the secure /metrics.
   */
  metricsReaders?: readonly string[];
  /**
   * Where the metrics serving certificate comes from: 'cert-manager' (a Certificate for the
   * metrics Service from the self-signed Issuer, its Secret mounted, the ServiceMonitor
   * verifying it) or 'self-signed' (made by the operator at start-up, not verifiable).
   * Default: cert-manager when the webhooks' certificate already comes from it, else self-signed.
   */
  metricsCertificates?: 'cert-manager' | 'self-signed';
  /**
   * Write a Namespace object for the operator's namespace (default false: it must exist).
   * Deleting it deletes everything in it, and it may be shared, so it is never part of
   * the operator's own objects.
   */
  createNamespace?: boolean;
  /**
   * The hub classes of the kinds with a `@Conversion`: their CRDs get `conversion: Webhook`
   * through `webhookService` at `/convert`.
   */
  conversions?: readonly ClassType[];
  /** The Service in front of the webhook server (default `<name>-webhook-service` in the operator's namespace, port 443). */
  webhookService?: WebhookServiceReference;
  /**
   * The app's webhook configurations and how their certificate is made. With configurations,
   * or a CRD converting through the webhook: the Service, the certificate, and what the
   * Deployment needs.
   */
  webhooks?: WebhookManifestOptions;
  /**
   * NetworkPolicies for the operator's pods (default true): /metrics only from namespaces
   * labelled `metrics: enabled` and those of the metricsReaders, the webhook port from
   * anywhere (the API server's address is not a pod's), every other port closed but to
   * the pod's own node (the kubelet's probes).
   */
  networkPolicy?: boolean;
}

/** What `nestor manifests` writes, as objects. */
export interface OperatorManifests {
  crds: GeneratedCustomResourceDefinition[];
  /** The operator's Namespace, only when asked for with `createNamespace`. */
  namespace?: Manifest;
  /**
   * ServiceAccount, the controllers' ClusterRole (or Role in their one namespace) and
   * binding, leader election's Role and binding, the storage-version migration's
   * ClusterRole and binding, the metrics auth ClusterRole and binding, the metrics-reader
   * ClusterRole (and its bindings when asked for).
   */
  rbac: Manifest[];
  deployment: Manifest[];
  /** The metrics Service (absent when the operator serves no metrics), and the ServiceMonitor when asked for. */
  metrics?: Manifest[];
  /** With webhooks: the Service, the Validating/MutatingWebhookConfigurations, cert-manager's Issuer and Certificate. */
  webhooks?: Manifest[];
  /** The NetworkPolicies of the metrics and webhook ports, unless turned off (`networkPolicy: false`). */
  networkPolicies?: Manifest[];
  /** With a fleet: what to apply to every member cluster (memberRbac). */
  members?: Manifest[];
}

/** CRDs, least-privilege RBAC and a Deployment for an operator made of these controllers. */
export function operatorManifests(options: OperatorManifestOptions): OperatorManifests {
  const conversions = options.conversions ?? [];
  const webhooksByCertManager =
    (options.webhooks?.configurations.length || conversions.length) &&
    (options.webhooks?.certificates ?? 'cert-manager') === 'cert-manager';
  const secureMetrics = (options.metricsPort ?? 1) > 0 && options.metricsSecure !== false;
  const metricsCertificates =
    options.metricsCertificates ?? (webhooksByCertManager && secureMetrics ? 'cert-manager' : 'self-signed');
  if (metricsCertificates === 'cert-manager') {
    if (!secureMetrics)
      throw new Error(
        "metricsCertificates 'cert-manager' needs metrics over HTTPS: the operator serves none (metrics port 0 or metrics.secure false)",
      );
    options = { ...options, metricsCertificateSecret: metricsNames(options.name).secret };
  }
  const settings = resolveOperatorSettings(options, options);
  const classes = allVersionsOf([
    ...customResourcesOf(options.controllers),
    ...(options.customResources ?? []),
    ...conversions,
  ]);
  const namespace: Manifest = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: options.namespace, labels: operatorLabels(options.name) },
  };
  const crds = withWebhookConversion(
    customResourceDefinitions(classes),
    conversions.map((hub) => {
      const metadata = getCustomResourceMetadata(hub);
      if (!metadata) throw new Error(`${hub.name} is not decorated with @CustomResource({ group, version, kind })`);
      return `${metadata.plural}.${metadata.group}`;
    }),
    options.webhookService ?? webhookServiceOf(options),
  );
  const manifests: OperatorManifests = {
    crds,
    ...(options.createNamespace ? { namespace } : {}),
    rbac: operatorRbac({
      ...options,
      ...(settings.watchNamespace ? { watchNamespace: settings.watchNamespace } : {}),
      leaderElection: settings.leaderElection ?? false,
      ...(options.shardReplicas !== undefined ? { sharding: true } : {}),
      // As the operator decides: on unless it watches one namespace (its rights stop there).
      ...((options.storageMigration ?? !settings.watchNamespace)
        ? { storageMigrationRules: storageMigrationRules(crds) }
        : {}),
    }),
    deployment: [operatorDeployment(options)],
    ...(options.members?.length
      ? { members: memberRbac({ name: options.name, namespace: options.namespace, controllers: options.members }) }
      : {}),
  };
  if (settings.metrics) {
    const metrics = metricsManifests({
      ...options,
      metrics: settings.metrics,
      ...(metricsCertificates === 'cert-manager'
        ? { certManager: { issuer: webhookNames(options.name).issuer, writeIssuer: !webhooksByCertManager } }
        : {}),
    });
    manifests.rbac.push(...metrics.rbac);
    manifests.metrics = metrics.metrics;
  } else if (options.serviceMonitor || options.metricsReaders?.length) {
    throw new Error(
      'a ServiceMonitor or metrics readers are asked for, but the operator serves no metrics (metricsPort 0): drop them, or give metrics a port',
    );
  }
  const serving = options.webhooks?.configurations.length || manifests.crds.some(hasWebhookConversion);
  const policies =
    options.networkPolicy === false
      ? []
      : networkPolicies({
          name: options.name,
          namespace: options.namespace,
          ...(settings.metrics ? { metricsPort: settings.metrics.port } : {}),
          ...(serving ? { webhookPort: options.webhooks?.server?.port ?? WEBHOOK_PORT } : {}),
          metricsReaderNamespaces: (options.metricsReaders ?? []).map((reader) => reader.split('/')[0]!),
        });
  if (policies.length) manifests.networkPolicies = policies;
  if (!serving) return manifests;
  const webhooks = webhookManifests(
    { ...options, service: options.webhookService ?? webhookServiceOf(options) },
    manifests.crds,
    manifests.deployment[0]!,
    options.webhooks ?? { configurations: [] },
  );
  return {
    ...manifests,
    crds: webhooks.crds,
    rbac: [...manifests.rbac, ...webhooks.rbac],
    deployment: [webhooks.deployment],
    webhooks: [...webhooks.webhooks, ...webhooks.certificates],
  };
}

/**
 * The default webhook Service of an operator: `<name>-webhook-service` in its namespace, port
 * 443, or the one its module's certificate names (`webhooks.server.serviceName`).
 */
export function webhookServiceOf(
  options: Pick<OperatorManifestOptions, 'name' | 'namespace' | 'webhooks'>,
): WebhookServiceReference {
  const name = options.webhooks?.server?.serviceName ?? `${options.name}-webhook-service`;
  return { name, namespace: options.namespace, port: 443 };
}
