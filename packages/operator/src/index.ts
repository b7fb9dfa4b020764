// The public API of @nestor/operator.

// Nest layer
export { OperatorModule, loadKubeConfig } from './nest/operator.module.js';
export type { OperatorModuleOptions } from './nest/operator-options.interface.js';
export { OPERATOR_MODULE_OPTIONS } from './nest/operator.module-definition.js';
export { KUBE_CONFIG } from './nest/operator.constants.js';
export { Controller, OperatorController, type ControllerOptions } from './nest/decorators/controller.decorator.js';
export { Reconcile } from './nest/decorators/reconcile.decorator.js';
export { Watches, type WatchesOptions } from './nest/decorators/watches.decorator.js';
export { Finalizer } from './nest/decorators/finalizer.decorator.js';
export { Source } from './nest/decorators/source.decorator.js';
export { OperatorRegistry } from './nest/operator.registry.js';
export type { ReconcileContext } from './nest/reconcile-context.js';
export { defaultFinalizerName } from './nest/controller-binding.js';

// Kinds and custom resources
export * from './client/kinds.js';
export { KindRegistry } from './client/kind-registry.js';
export {
  CustomResource,
  resourceOf,
  pluralOf,
  type CustomResourceOptions,
  type PrinterColumn,
  type ResourceType,
} from './crd/custom-resource.decorator.js';

// Client
export {
  KubeClient,
  controllerReference,
  type ApplyOptions,
  type EventType,
  type KubeClientOptions,
  type ListOptions,
} from './client/kube-client.js';
export { Transport } from './client/transport.js';
export { KubeApiError } from './client/errors.js';

// Runtime
export * from './runtime/index.js';

// CRDs from decorated classes
export {
  Field,
  type FieldOptions,
  type ValueOptions,
  type ValidationRule,
  type ScalarType,
  type TypeThunk,
} from './crd/field.decorator.js';
export { schemaOf, SchemaError, type JSONSchemaProps } from './crd/schema.js';
export {
  customResourceDefinition,
  customResourceDefinitions,
  type GeneratedCustomResourceDefinition,
} from './crd/crd-generator.js';
export {
  installCustomResourceDefinitions,
  type InstallableCustomResourceDefinition,
  type InstallCustomResourcesOptions,
} from './crd/crd-installer.js';

// Manifests: CRDs, RBAC and a Deployment from the decorators (what `nestor manifests` writes)
export { rbacRulesFor, leaderElectionRules, type ControllerAccess, type PolicyRule } from './crd/rbac.js';
export {
  operatorManifests,
  manifestFiles,
  customResourcesOf,
  yamlDocuments,
  type Manifest,
  type OperatorManifests,
  type OperatorManifestOptions,
} from './crd/manifests.js';
export { allVersionsOf } from './crd/custom-resource.decorator.js';
export { controllersOfModule, describeController, type ScannedController } from './nest/module-scanner.js';

// Production runtime: metrics, probes, leader election
export { OperatorMetrics, type WatchStatsSource } from './metrics/operator-metrics.js';
export { OperatorHttpServer } from './nest/operator-http.server.js';
export { LeaseLock, type LeaseLockOptions } from './runtime/leader-election.js';
export type { LeaderElectionOptions } from './nest/operator-options.interface.js';
