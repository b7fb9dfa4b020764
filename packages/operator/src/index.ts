// The public API of @nestor/operator. `@nestor/operator/runtime` is the same without the
// Nest layer; everything it exports is exported here too.

// Nest layer
export { OperatorModule } from './nest/operator.module.js';
export type {
  OperatorModuleOptions,
  LeaderElectionOptions,
  MetricsServerOptions,
  HealthServerOptions,
  CacheOptions,
  KindCacheOptions,
  ShardingModuleOptions,
} from './nest/interfaces/operator-options.interface.js';
export { OPERATOR_MODULE_OPTIONS } from './nest/operator.module-definition.js';
export {
  readOperatorFlags,
  withOperatorFlags,
  bindAddress,
  OPERATOR_FLAG_NAMES,
  type OperatorFlags,
  type BindAddress,
} from './config/operator-flags.js';
export { operatorLogger, type OperatorLoggerOptions } from './nest/operator.logger.js';
export { KUBE_CONFIG } from './nest/operator.constants.js';
export {
  Controller,
  OperatorController,
  type ControllerOptions,
  type OwnedKind,
} from './nest/decorators/controller.decorator.js';
export { Reconcile } from './nest/decorators/reconcile.decorator.js';
export {
  Watches,
  type WatchesOptions,
  type WatchesMapper,
  type NamespaceOf,
} from './nest/decorators/watches.decorator.js';
export { Finalizer, type FinalizerMetadata } from './nest/decorators/finalizer.decorator.js';
export { Timer, type TimerOptions } from './nest/decorators/timer.decorator.js';
export { Source } from './nest/decorators/source.decorator.js';
export { OperatorRegistry } from './nest/operator.registry.js';
export type { ReconcileContext } from './nest/reconcile-context.js';
export {
  controllersOfModule,
  conversionsOfModule,
  describeController,
  webhooksOfModule,
  operatorOptionsOfModule,
  type ScannedController,
  type ScannedOperatorOptions,
} from './nest/module-scanner.js';
export { deploymentSettings, type DeploymentRequest } from './nest/deployment-settings.js';
export { OperatorHttpServer } from './nest/operator-http.server.js';
export {
  Webhook,
  ValidateCreate,
  ValidateUpdate,
  ValidateDelete,
  Default,
  type WebhookHandlerKind,
} from './nest/decorators/webhook.decorator.js';
export { WebhookServer } from './nest/webhook.server.js';
export { WEBHOOK_CONTEXT_TYPE, webhookContextOf } from './nest/webhook-enhancers.js';
export type {
  SelfManagedCertificateOptions,
  WebhookServerOptions,
} from './nest/interfaces/operator-options.interface.js';
export { webhookConfigurationsOf, readWebhookDefinition, type WebhookDefinition } from './nest/webhook-metadata.js';
export {
  Conversion,
  ConvertToHub,
  ConvertFromHub,
  type ConversionOptions,
} from './nest/decorators/conversion.decorator.js';
export { readConversionDefinition, converterOf, type ConversionDefinition } from './nest/conversion-metadata.js';

// Core, client, custom resource classes, runtime, sharding; serving, webhooks without Nest, flags
export * from './runtime-entry.js';

// CRDs from decorated classes
export {
  Field,
  type FieldOptions,
  type ValueOptions,
  type ValidationRule,
  type ScalarType,
  type TypeThunk,
  type ClassType,
} from './crd/field.decorator.js';
export { schemaOf, SchemaError, type JSONSchemaProps } from './crd/schema.js';
export type { SchemaConstraints } from './crd/schema-constraints.js';
export {
  customResourceDefinition,
  customResourceDefinitions,
  type GeneratedCustomResourceDefinition,
  type CustomResourceConversion,
} from './crd/crd-generator.js';
export { allVersionsOf } from './crd/custom-resource.decorator.js';

// Manifests: CRDs, RBAC and a Deployment from the decorators (what `nestor manifests` writes)
export { customResourcesOf, type ControllerResources } from './crd/controller-resources.js';
export {
  rbacRulesFor,
  leaderElectionRules,
  type ControllerAccess,
  type WatchNamespaces,
  type PolicyRule,
  type RbacRulesOptions,
} from './manifests/rbac.js';
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
  type WebhookConfigurationManifest,
} from './manifests/webhook-manifests.js';
export { yamlDocuments, GENERATED_NOTICE } from './manifests/yaml-documents.js';

// Metrics
export { OperatorMetrics } from './metrics/operator-metrics.js';
export type { WatchStatsSource } from './metrics/watch-metrics.js';
