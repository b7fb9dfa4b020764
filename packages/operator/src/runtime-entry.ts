// @nestor/operator/runtime: everything needed to run controllers without Nest. Importing
// it loads neither @nestjs/* nor the decorators' Nest glue (checked by architecture.test).
// It sits outside runtime/ because it also exports what builds on the runtime: sharding and
// the serving layer.

// Core, client, custom resource classes and the runtime.
export * from './runtime/index.js';

// Sharding: shard Leases, ring membership, consistent-hash assignment, shard labels.
export * from './sharding/index.js';

// Serving: /metrics and its authorization, the probes, the webhook HTTPS server, certificates.
export * from './serving/index.js';
// What the webhook server serves: admission and conversion reviews, their handlers, configurations.
export * from './webhooks/index.js';
// kubebuilder's manager flags and their environment variables.
export * from './config/index.js';
// Prometheus metrics with controller-runtime's names, which /metrics serves.
export { OperatorMetrics } from './metrics/operator-metrics.js';
export type { WatchStatsSource } from './metrics/watch-metrics.js';
