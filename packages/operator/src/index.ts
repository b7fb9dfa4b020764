// The public API of @nestor/operator: what an operator written with Nest imports. The Nest
// layer (OperatorModule, the decorators, the reconcile context, the webhook and conversion
// decorators), the objects it handles (built-in kinds, custom resource classes, conditions,
// quantities), the client, results and predicates, and the providers a Nest app injects.
// Everything else sits behind an entry of its own, by concern: `/runtime` (controllers
// without Nest), `/sharding`, `/webhooks` (handlers and formats without Nest), `/manifests`
// (what `nestor manifests` builds on), `/upgrades` (storage-version migration), `/fake` (the
// test double), `/terminus`.
// docs/ARCHITECTURE.md, "Entry points"; the API reports in api/*.api.md.

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
export { readOperatorFlags, withOperatorFlags, type OperatorFlags } from './config/operator-flags.js';
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
export { webhookConfigurationsOf } from './nest/webhook-metadata.js';
export {
  Conversion,
  ConvertToHub,
  ConvertFromHub,
  type ConversionOptions,
} from './nest/decorators/conversion.decorator.js';

// The providers OperatorModule gives a Nest app to inject, and the cluster's configuration.
export { ClusterConfig, Transport, type KubeConfigSource } from '@nestor/core';
export { Manager } from './runtime/manager/manager.js';
export { Cluster } from './runtime/manager/cluster.js';
// Many clusters: the providers and the rest are in `@nestor/operator/fleet`.
export { Fleet } from './runtime/fleet/fleet.js';
export type { ClusterSelection } from './runtime/controller/controller-options.js';
export { InformerCache } from './runtime/cache/informer-cache.js';
export { EventRecorder } from './client/event-recorder.js';
export { OperatorMetrics } from './metrics/operator-metrics.js';
export { ownNamespace } from './runtime/own-namespace.js';

// Objects, references and errors: the base layer's vocabulary.
export {
  KubeApiError,
  apiVersionOf,
  keyOf,
  refOf,
  refOfObject,
  type KubeStatus,
  type KubeObject,
  type ObjectMeta,
  type OwnerReference,
  type ObjectRef,
  type ResourceDescriptor,
  type RuntimeLogger,
} from '@nestor/core';

// The client and the built-in kinds (descriptors and their object types).
export * from './client/kinds.js';
export {
  KubeClient,
  type ApplyOptions,
  type ClientScope,
  type DeleteOptions,
  type EventType,
  type ListOptions,
  type PatchType,
} from './client/kube-client.js';
export type { ObjectSelector } from './client/object-selector.js';

// Reconciling: results, finalizers, polling, the predicates that filter events.
export { TerminalError, ReconcileTimeoutError, type ReconcileResult } from './runtime/controller/result.js';
export type { ReconcileRequest } from './runtime/controller/reconciler.js';
export {
  withFinalizer,
  defaultFinalizerName,
  type FinalizerOptions,
} from './runtime/controller/reconcilers/finalizer.js';
export { poll, type PollOptions } from './runtime/controller/poller.js';
export {
  generationChanged,
  labelsChanged,
  annotationsChanged,
  resourceVersionChanged,
  anyOf,
  allOf,
  type Predicate,
  type ResourceEvent,
} from './runtime/controller/predicates.js';

// Custom resource classes and their CRDs.
export {
  CustomResource,
  resourceOf,
  pluralOf,
  allVersionsOf,
  type CustomResourceOptions,
  type PrinterColumn,
  type ResourceType,
} from './crd/custom-resource.decorator.js';
export type { Defaulted, AsWritten } from './crd/defaulted.js';
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
export {
  compareQuantities,
  isQuantity,
  quantityToNumber,
  QuantityError,
  QUANTITY_PATTERN,
  type Quantity,
} from './crd/quantity.js';

// Status conditions: metav1.Condition as a @Field class, and meta's condition helpers.
export { Condition, ConditionsField, type ConditionStatus } from './conditions/condition.js';
export {
  setStatusCondition,
  removeStatusCondition,
  findStatusCondition,
  isStatusConditionTrue,
  isStatusConditionFalse,
  isStatusConditionPresentAndEqual,
  StatusConditions,
  metaTime,
  type ConditionUpdate,
  type ConditionClockOptions,
  type ObjectWithConditions,
} from './conditions/status-conditions.js';

// What a validating or defaulting webhook method takes and throws, and conversion's annotation.
export { AdmissionDenied } from './webhooks/admission-denied.js';
export type { AdmissionContext, Warnings } from './webhooks/admission-handler.js';
export type { AdmissionOperation, UserInfo } from './webhooks/admission-review.js';
export { CONVERSION_DATA_ANNOTATION } from './webhooks/conversion-data.js';

// A Nest app may meet the Lease being lost: a fenced write then fails with this.
export { LeaseLostError } from './runtime/leases/leader-election.js';
// The injected KubeClient refuses a write outside any run when it cannot know its fence.
export { WriteOutsideRunError } from './runtime/leases/lease-fence.js';
export { currentRun, type RunContext } from './client/run-context.js';

// Moved to an entry of their own in this release; still here, deprecated, until the next.
export {
  /** @deprecated Import it from `@nestor/operator/runtime`; this path goes in the next release. */
  HttpKubeClient,
} from './client/http-kube-client.js';
// Each from its own file, not webhooks/index.js: what the index exports besides (certificates,
// the review intake, caBundle injection) would load with every Nest application.
export {
  /** @deprecated Import it from `@nestor/operator/webhooks`; this path goes in the next release. */
  ConversionWebhook,
} from './webhooks/conversion-webhook.js';
export {
  /** @deprecated Import it from `@nestor/operator/webhooks`; this path goes in the next release. */
  HubSpokeConverter,
} from './webhooks/hub-spoke-converter.js';
export {
  /** @deprecated Import it from `@nestor/operator/webhooks`; this path goes in the next release. */
  jsonPatch,
} from './webhooks/json-patch.js';
export {
  /** @deprecated Import it from `@nestor/operator/webhooks`; this path goes in the next release. */
  validate,
  /** @deprecated Import it from `@nestor/operator/webhooks`; this path goes in the next release. */
  mutate,
} from './webhooks/admission-handler.js';
export {
  /** @deprecated Import it from `@nestor/operator/manifests`; this path goes in the next release. */
  webhookConversion,
  /** @deprecated Import it from `@nestor/operator/manifests`; this path goes in the next release. */
  withWebhookConversion,
  /** @deprecated Import it from `@nestor/operator/manifests`; this path goes in the next release. */
  hasWebhookConversion,
} from './manifests/crd-conversion.js';
export {
  /** @deprecated Import it from `@nestor/operator/manifests`; this path goes in the next release. */
  OPERATOR_NODE_OPTIONS,
} from './manifests/deployment.js';
export {
  /** @deprecated Import it from `@nestor/operator/manifests`; this path goes in the next release. */
  terminationGracePeriodSeconds,
} from './manifests/operator-settings.js';
