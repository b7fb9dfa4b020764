// Upgrades of an operator's own kinds: storage-version migration (docs/upgrades.md). The
// package entry `@nestor/operator/upgrades`; the operator's leader runs it by itself
// (`migrateStorageVersions`), and `nestor migrate-storage` runs it as a Job.
export {
  migrateStorageVersion,
  describeCounts,
  DEFAULT_MIGRATION_WRITES_PER_SECOND,
  DEFAULT_MIGRATION_CONCURRENCY,
  type StorageMigrationOptions,
  type MigrateStorageVersionOptions,
  type MigrationCounts,
  type MigrationProgress,
  type MigrationOutcome,
  type MigrationResult,
} from './storage-version-migration.js';
export {
  StorageVersionMigrations,
  type StorageVersionMigrationsOptions,
  type StorageMigrationMetrics,
} from './storage-migrations.js';
export {
  storageMigrationPlan,
  type StorageMigrationPlan,
  type CustomResourceDefinitionObject,
} from './stored-versions.js';
export { rewriteObject, type RewriteOutcome, type RewriteOptions } from './object-rewrite.js';
