// The framework-free runtime: usable without Nest.
export { type Clock, systemClock } from './clock.js';
export {
  Controller,
  type ControllerOptions as RuntimeControllerOptions,
  type ReconcileRequest,
  type Reconciler,
  type WatchSource,
  type ReconcileOutcome,
  type ControllerMetricsSink,
} from './controller.js';
export * from './informer.js';
export type { KubeObject, ObjectMeta, OwnerReference } from './kube-object.js';
export { type RuntimeLogger, silentLogger, consoleLogger } from './logger.js';
export {
  Manager,
  type ManagerOptions,
  type ManagerHealth,
  type HealthCheck,
  type ManagerMetrics,
  type LeaderElection,
} from './manager.js';
export { keyOf, refOf, type ObjectRef } from './object-ref.js';
export * from './predicates.js';
export * from './queue.js';
export * from './rate-limiter.js';
export { TerminalError, ReconcileTimeoutError, toError, type ReconcileResult } from './result.js';
export { apiVersionOf, resourceName, resourcePath, type ResourceDescriptor } from './resource.js';
export * from './watch.js';
export * from './worker-pool.js';
