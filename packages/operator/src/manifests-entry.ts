// @nestor/operator/manifests: what `nestor manifests` builds on. What a Nest module declares
// (its controllers, webhooks, conversions and operator options, read from the decorators)
// and the manifests made from it: CRDs, RBAC, the Deployment and its settings, metrics,
// network policies, Grafana dashboards, webhook configurations; and the compatibility check
// of those CRDs against the previous release's. It reads a module's decorators, so it loads
// @nestjs/common, as the root entry does.

// What a module declares, read from its decorators.
export {
  controllersOfModule,
  conversionsOfModule,
  describeController,
  webhooksOfModule,
  operatorOptionsOfModule,
  type ScannedController,
  type ScannedOperatorOptions,
} from './nest/module-scanner.js';
export { moduleMetadataOf, type ModuleLists } from './nest/module-metadata.js';
export {
  deploymentSettings,
  webhookServerSettings,
  type DeploymentRequest,
  type WebhookRequest,
} from './nest/deployment-settings.js';
export { readWebhookDefinition, type WebhookDefinition } from './nest/webhook-metadata.js';
export { readConversionDefinition, converterOf, type ConversionDefinition } from './nest/conversion-metadata.js';

// CRDs from decorated classes: the resources of a set of controllers.
export { customResourcesOf, type ControllerResources } from './crd/controller-resources.js';

// The compatibility check of a release's CRDs against the previous release's (docs/upgrades.md).
export {
  checkCrdCompatibility,
  type AllowedFinding,
  type CompatibilityCheckOptions,
  type CompatibilityFinding,
  type CompatibilityReport,
} from './crd/compatibility/crd-compatibility.js';
export {
  readComparedCrd,
  CrdCompatibilityInputError,
  type ComparedCrd,
  type ComparedVersion,
  type SchemaNode,
} from './crd/compatibility/compared-crd.js';
export { readCompatibilityAllowances, type CompatibilityAllowance } from './crd/compatibility/allowances.js';
export { COMPATIBILITY_RULES, RULE_REMEDIES, type CompatibilityRule } from './crd/compatibility/compatibility-rules.js';

// The manifests.
export {
  rbacRulesFor,
  leaderElectionRules,
  type ControllerAccess,
  type WatchNamespaces,
  type PolicyRule,
  type RbacRulesOptions,
} from './manifests/rbac.js';
export { storageMigrationRules, type MigratedCustomResourceDefinition } from './manifests/storage-migration-rbac.js';
export {
  operatorManifests,
  webhookServiceOf,
  type OperatorManifests,
  type OperatorManifestOptions,
} from './manifests/operator-manifests.js';
export {
  webhookConversion,
  withWebhookConversion,
  hasWebhookConversion,
  type WebhookServiceReference,
} from './manifests/crd-conversion.js';
export { OPERATOR_NODE_OPTIONS, type OperatorDeploymentOptions } from './manifests/deployment.js';
export {
  terminationGracePeriodSeconds,
  OPERATOR_VARIABLES,
  SHUTDOWN_MARGIN_SECONDS,
  type OperatorSettings,
  type OperatorSetting,
} from './manifests/operator-settings.js';
export {
  metricsNames,
  metricsManifests,
  type MetricsManifestOptions,
  type MetricsManifests,
} from './manifests/metrics-manifests.js';
export {
  networkPolicies,
  networkPolicyNames,
  METRICS_NAMESPACE_LABEL,
  type NetworkPolicyOptions,
} from './manifests/network-policy-manifests.js';
export { watchedNamespaces } from './manifests/watched-namespace.js';
export {
  grafanaDashboards,
  grafanaDashboardsConfigMap,
  GRAFANA_SCHEMA_VERSION,
  GRAFANA_SIDECAR_LABEL,
  type GrafanaDashboard,
  type GrafanaDatasource,
  type GrafanaPanel,
  type GrafanaRow,
  type GrafanaTarget,
  type GrafanaVariable,
} from './manifests/grafana-dashboards.js';
export type { Manifest } from './manifests/manifest.js';
export { manifestFiles } from './manifests/manifest-files.js';
export { MANIFEST_FOLDERS } from './manifests/manifest-folders.js';
export {
  INJECT_CA_FROM,
  webhookManifests,
  webhookNames,
  type WebhookCertificates,
  type WebhookManifestOptions,
  type WebhookManifests,
  type WebhookServerSettings,
  type WebhookConfigurationManifest,
} from './manifests/webhook-manifests.js';
export { yamlDocuments, GENERATED_NOTICE } from './manifests/yaml-documents.js';

// An OLM bundle from the same objects (docs/upgrades.md: shipping with OLM).
export {
  clusterServiceVersion,
  OLM_CAPABILITIES,
  type ClusterServiceVersionOptions,
  type OlmBundleMetadata,
} from './manifests/olm/cluster-service-version.js';
export { olmBundleFiles, bundleAnnotations } from './manifests/olm/olm-bundle.js';
export {
  ownedCrdDescriptions,
  type OlmDescriptor,
  type OlmKindDescription,
  type OwnedCrdDescription,
} from './manifests/olm/crd-descriptors.js';
