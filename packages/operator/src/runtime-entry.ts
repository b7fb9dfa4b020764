// @nestor/operator/runtime: everything needed to run controllers without Nest. Importing
// it loads neither @nestjs/* nor the decorators' Nest glue (checked by architecture.test).
// It sits outside runtime/ because it also exports what builds on the runtime: the serving
// layer. Sharding has its own entry (`@nestor/operator/sharding`, sharding/index.ts), and so
// have the webhooks' handlers and formats (`@nestor/operator/webhooks`, webhooks/index.ts).

// Core, client, custom resource classes and the runtime.
export * from './runtime/index.js';

// One operator built from its options, as OperatorModule builds it: cluster, manager, Leases,
// sharding, the metrics, probes and webhook servers.
export { createOperator, type CreateOperatorOptions, type Operator } from './compose/create-operator.js';
export type {
  OperatorOptions,
  CacheOptions,
  KindCacheOptions,
  LeaderElectionOptions,
  ShardingModuleOptions,
  StorageVersionMigrationOptions,
  WebhookServerOptions,
} from './compose/operator-options.js';

// Serving: /metrics and its authorization, the probes, the webhook HTTPS server, certificates.
export * from './serving/index.js';
// kubebuilder's manager flags and their environment variables, and the operator's namespace.
export * from './config/index.js';
export { ownNamespace } from './runtime/own-namespace.js';
// Prometheus metrics with controller-runtime's names, which /metrics serves.
export { OperatorMetrics } from './metrics/operator-metrics.js';
export type { WatchStatsSource } from './metrics/watch-metrics.js';

// Moved to entries of their own in this release; still here, deprecated, until the next. Each
// from its own file, not the folder's index: the rest of webhooks/ and sharding/ stays unloaded
// in an operator that serves no webhook and runs unsharded.
export {
  /** @deprecated Import it from `@nestor/operator/webhooks`; this path goes in the next release. */
  AdmissionDenied,
} from './webhooks/admission-denied.js';
export {
  /** @deprecated Import it from `@nestor/operator/webhooks`; this path goes in the next release. */
  webhookConfigurations,
} from './webhooks/webhook-configuration.js';
export {
  /** @deprecated Import it from `@nestor/operator/sharding`; this path goes in the next release. */
  HashRing,
} from './sharding/hash-ring.js';
export {
  /** @deprecated Import it from `@nestor/operator/sharding`; this path goes in the next release. */
  ringPosition,
} from './sharding/hash64.js';
