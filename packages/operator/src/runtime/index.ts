// @nestor/operator/runtime: everything needed to run controllers without Nest. Importing
// it loads neither @nestjs/* nor the decorators' Nest glue (checked by architecture.test).

// The base layer: transport, errors, descriptors, refs, clock, logger, CRD installation.
export * from '@nestor/core';

// The client: typed reads and writes, kinds.
export * from '../client/kinds.js';
export { KindRegistry } from '../client/kind-registry.js';
export {
  KubeClient,
  controllerReference,
  type ApplyOptions,
  type CacheReader,
  type ClientScope,
  type WriteFence,
  type EventType,
  type KubeClientOptions,
  type ListOptions,
} from '../client/kube-client.js';
export {
  EventRecorder,
  withReportingController,
  type EventRecorderOptions,
  type EventRecorderMetrics,
  type EventRecorderStats,
  type EventDropReason,
  type RecordOptions,
} from '../client/event-recorder.js';
export type { EventObjectReference } from '../client/event-series.js';
export type { EventsApi } from '../client/event-sink.js';

// Serving: /metrics and its authorization, the probes, the webhook HTTPS server, certificates.
export * from '../serving/index.js';
// What the webhook server serves: admission and conversion reviews, their handlers, configurations.
export * from '../webhooks/index.js';
// kubebuilder's manager flags and their environment variables.
export * from '../config/index.js';
// Prometheus metrics with controller-runtime's names, which /metrics serves.
export { OperatorMetrics, type WatchStatsSource } from '../metrics/operator-metrics.js';

// Custom resource classes (reflect-metadata only).
export {
  CustomResource,
  resourceOf,
  pluralOf,
  type CustomResourceOptions,
  type PrinterColumn,
  type ResourceType,
} from '../crd/custom-resource.decorator.js';

// Status conditions: metav1.Condition as a @Field class, and meta's condition helpers.
export { Condition, ConditionsField, type ConditionStatus } from '../crd/condition.js';
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
} from '../crd/status-conditions.js';

// The runtime: watch -> informer -> event sources -> queue -> worker pool -> reconcile loop.
export * from './watch.js';
export * from './informer.js';
export * from './predicates.js';
export * from './queue.js';
export * from './rate-limiter.js';
export * from './worker-pool.js';
export type { ReconcileRequest, Reconciler } from './reconciler.js';
export { type WatchSource, type ExternalSource } from './event-sources.js';
export type { BackoffOptions } from './backoff.js';
export type { OutageGate, OutageGateOptions } from './outage-gate.js';
export { poll, type PollOptions } from './poller.js';
export { type ReconcileOutcome, type ControllerMetricsSink, RETRIES_EXHAUSTED_REASON } from './reconcile-loop.js';
export { ManagedController, type ManagedControllerOptions, type OwnedResource } from './managed-controller.js';
export type { ShardScope, ShardingMetrics, ShardedObjects } from './shard-scope.js';
export type { ObjectTimer } from './object-timers.js';
export { withFinalizer, defaultFinalizerName, type FinalizerOptions } from './reconcilers/finalizer.js';
export { withTracing } from './reconcilers/tracing.js';
export { TerminalError, ReconcileTimeoutError, toError, type ReconcileResult } from './result.js';
export { Manager, type ManagerOptions, type ManagerHealth, type HealthCheck, type ManagerMetrics } from './manager.js';
export { Coordination, type CoordinationEvents, type CoordinationOptions } from './coordination.js';
export { LeaseFence, type LeaseFenceOptions, type FencingLease } from './write-fence.js';
export { LeaseLock, LeaseLostError, type LeaseLockOptions, type LeaderElection } from './leader-election.js';

// Sharding: shard Leases, ring membership, consistent-hash assignment, shard labels.
export * from '../sharding/index.js';
