// @nestor/operator/runtime: everything needed to run controllers without Nest. Importing
// it loads neither @nestjs/* nor the decorators' Nest glue (checked by architecture.test).
// It sits outside runtime/ because it also exports sharding, which builds on the runtime.

// Core, client, custom resource classes and the runtime.
export * from './runtime/index.js';

// Sharding: shard Leases, ring membership, consistent-hash assignment, shard labels.
export * from './sharding/index.js';
