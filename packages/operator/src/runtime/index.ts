// The runtime layer's public surface, and with it the layers below (core, client, custom
// resource classes). The package entry `@nestor/operator/runtime` is ../runtime-entry.ts,
// which adds sharding: sharding sits on top of the runtime, so the runtime may not import it.

// The base layer: transport, errors, descriptors, refs, clock, logger, CRD installation,
// certificates, defaults. Not its decoders, protobuf tables and abort plumbing: those stay
// @nestor/core's own (import them from there).
export {
  DEFAULT_RETRY_AFTER_ATTEMPTS,
  Transport,
  type Query,
  type RequestOptions,
  type StreamOptions,
  type StreamedTransportResponse,
  type TransportOptions,
  type TransportResponse,
  KubeApiError,
  describeRequest,
  retryAfterMs,
  type FailedRequest,
  type KubeStatus,
  ObjectTooDeepError,
  type RefusedObject,
  ClusterConfig,
  type KubeConfigSource,
  loadKubeConfig,
  type KubeConfigSearch,
  Connectivity,
  isUnreachable,
  type ConnectivityListener,
  servedResources,
  whyNotServed,
  installCustomResourceDefinitions,
  type InstallableCustomResourceDefinition,
  type InstallCustomResourcesOptions,
  apiVersionOf,
  resourceName,
  resourcePath,
  type ResourceDescriptor,
  withoutManagedFields,
  type KubeObject,
  type ObjectMeta,
  type OwnerReference,
  keyOf,
  refOf,
  refOfObject,
  type ObjectRef,
  type Clock,
  type TimerHandle,
  systemClock,
  ManualClock,
  type RuntimeLogger,
  silentLogger,
  consoleLogger,
  DEFAULT_CONCURRENCY,
  DEFAULT_SHUTDOWN_GRACE_MS,
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_RECONCILES,
  DEFAULT_FIELD_MANAGER,
  DEFAULT_WATCH_STALL_MS,
  DEFAULT_MIN_WATCH_TIMEOUT_SECONDS,
  DEFAULT_HTTP2_MIN_WATCH_TIMEOUT_SECONDS,
  MAX_OBJECT_DEPTH,
  METRICS_REVIEW_APPROVAL_TTL_MS,
  METRICS_REVIEW_REFUSAL_TTL_MS,
  METRICS_REVIEW_CACHE_ENTRIES,
  METRICS_TOKEN_REVIEWS_PER_SECOND,
  METRICS_TOKEN_REVIEW_BURST,
  retryWhileUnreachable,
  type RetryUnreachableOptions,
  certificateAuthority,
  certificateAuthorityFrom,
  selfSignedCertificate,
  type CertificateAuthority,
  type CertificateAuthorityOptions,
  type SelfSignedCertificate,
  type SelfSignedOptions,
} from '@nestor/core';

// The client: typed reads and writes, kinds.
export * from '../client/kinds.js'; // the descriptors, and their object types (types only)
export type { Wire } from '../client/wire.js';
export { KindRegistry } from '../client/kind-registry.js';
export {
  KubeClient,
  type ApplyOptions,
  type ClientScope,
  type DeleteOptions,
  type EventType,
  type ListOptions,
  type PatchType,
} from '../client/kube-client.js';
export {
  HttpKubeClient,
  controllerReference,
  type CacheReader,
  type CachedObjects,
  type WriteFence,
  type KubeClientOptions,
} from '../client/http-kube-client.js';
export {
  EventRecorder,
  type EventRecorderOptions,
  type EventRecorderMetrics,
  type EventRecorderStats,
  type EventDropReason,
  type RecordOptions,
} from '../client/event-recorder.js';
export type { EventObjectReference } from '../client/event-series.js';
export type { EventsApi } from '../client/event-sink.js';

// Custom resource classes (reflect-metadata only).
export {
  CustomResource,
  resourceOf,
  pluralOf,
  type CustomResourceOptions,
  type PrinterColumn,
  type ResourceType,
} from '../crd/custom-resource.decorator.js';
export type { Defaulted, AsWritten } from '../crd/defaulted.js';
export {
  compareQuantities,
  isQuantity,
  quantityToNumber,
  QuantityError,
  QUANTITY_PATTERN,
  MAX_QUANTITY_EXPONENT,
  MAX_QUANTITY_LENGTH,
  type Quantity,
} from '../crd/quantity.js';

// Status conditions: metav1.Condition as a @Field class, and meta's condition helpers.
export { Condition, ConditionsField, type ConditionStatus } from '../conditions/condition.js';
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
} from '../conditions/status-conditions.js';

// The runtime: watch -> informer -> event sources -> queue -> worker pool -> reconcile loop.
export type { ObjectSelector } from '../client/object-selector.js';
export type { WatchEvent } from './watch/watch-event.js';
export type { WatchOptions, WatchTransport, WatchErrorInfo } from './watch/watch-options.js';
export type { WatchStats } from './watch/watch-stats.js';
export { watch } from './watch/watch.js';
export type { IndexFunc } from './cache/store-index.js';
export type { FieldIndexer } from './cache/field-index.js';
export type { ClientReads, ReadSource } from '../client/client-reads.js';
export {
  Informer,
  NAMESPACE_INDEX,
  OWNER_INDEX,
  type InformerEvent,
  type InformerMode,
  type InformerOptions,
} from './cache/informer.js';
export {
  InformerCache,
  type InformerSelector,
  type InformerHandle,
  type KeepSettings,
  type InformerCacheSettings,
} from './cache/informer-cache.js';
export type { KeepChoice } from './cache/keep-choice.js';
export * from './controller/predicates.js';
export * from './queue/queue.js';
export * from './queue/rate-limiter.js';
export * from './controller/worker-pool.js';
export type { ReconcileRequest, Reconciler } from './controller/reconciler.js';
export { currentRun, type RunContext } from '../client/run-context.js';
export { WriteOutsideRunError } from './leases/lease-fence.js';
export {
  type WatchSource,
  type ExternalSource,
  type Mapped,
  MAPPERS_IN_FLIGHT,
  MAPPER_TIMEOUT_MS,
} from './controller/event-sources.js';
export type { BackoffOptions } from './backoff.js';
export type { OutageGate, OutageGateOptions, OutageMetrics, OutageState } from './manager/outage-gate.js';
export { poll, type PollOptions } from './controller/poller.js';
export {
  type ReconcileOutcome,
  type ControllerMetricsSink,
  RETRIES_EXHAUSTED_REASON,
} from './controller/reconcile-loop.js';
export {
  ManagedController,
  type ManagedControllerOptions,
  type OwnedResource,
} from './controller/managed-controller.js';
export type { ClusterBinding } from './controller/controller-options.js';
export type {
  ChildrenOf,
  ShardingHooks,
  ShardScope,
  ShardedChild,
  ShardingMetrics,
  ShardedObjects,
} from './controller/sharding-hooks.js';
export type { ObjectTimer } from './controller/object-timers.js';
export { withFinalizer, defaultFinalizerName, type FinalizerOptions } from './controller/reconcilers/finalizer.js';
export { TerminalError, ReconcileTimeoutError, toError, type ReconcileResult } from './controller/result.js';
export {
  Manager,
  type ManagerOptions,
  type ManagerHealth,
  type HealthCheck,
  type ManagerMetrics,
  type LeaderTask,
  type Leading,
} from './manager/manager.js';
export { Cluster, DEFAULT_CLUSTER_NAME, type ClusterOptions, type ClusterConnectOptions } from './manager/cluster.js';
export type { HeapReleaseOptions } from './manager/heap-release.js';
// Many clusters: also its own entry, `@nestor/operator/fleet`.
export * from './fleet/index.js';
export type { ClusterFleet } from './manager/manager.js';
export type { LaneGroup } from './controller/worker-pool.js';
export {
  LeaseLock,
  LeaseLostError,
  type LeaseLockOptions,
  type LeaseLoss,
  type LeaderElection,
} from './leases/leader-election.js';
export type { LeaseTiming } from './leases/lease-timing.js';
