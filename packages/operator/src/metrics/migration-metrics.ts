import type { Registry } from 'prom-client';
import { prom } from './prom-client.js';
import type { MigrationCounts, MigrationProgress } from '../upgrades/storage-version-migration.js';
import type { StorageMigrationMetrics } from '../upgrades/storage-migrations.js';

const RESULTS = ['rewritten', 'current', 'gone', 'failed'] as const;

/** The storage-version migrations the leader runs (upgrades/): objects visited, objects left, runs. */
export function migrationMetrics(registry: Registry): StorageMigrationMetrics {
  const registers = [registry];
  const objects = new prom.Counter({
    name: 'nestor_storage_version_migration_objects_total',
    help: 'Objects a storage-version migration visited, by result: rewritten (now stored in the storage version), current (stored so already), gone (deleted meanwhile), failed',
    labelNames: ['crd', 'result'],
    registers,
  });
  const remaining = new prom.Gauge({
    name: 'nestor_storage_version_migration_remaining_objects',
    help: 'Objects the running storage-version migration of a CRD has still to visit, as the API server counts them (0 when none runs)',
    labelNames: ['crd'],
    registers,
  });
  const running = new prom.Gauge({
    name: 'nestor_storage_version_migration_running',
    help: 'Whether a storage-version migration of the CRD runs (1) or not (0)',
    labelNames: ['crd'],
    registers,
  });
  const runs = new prom.Counter({
    name: 'nestor_storage_version_migrations_total',
    help: 'Storage-version migrations that ended, by outcome: migrated (storedVersions trimmed), incomplete (objects failed), superseded (the CRD changed meanwhile), current (nothing to do), failed',
    labelNames: ['crd', 'outcome'],
    registers,
  });
  // The counts of each CRD's running migration so far: the counter takes their increments.
  const counted = new Map<string, MigrationCounts>();
  return {
    started: (crd) => {
      counted.set(crd, { rewritten: 0, current: 0, gone: 0, failed: 0 });
      for (const result of RESULTS) objects.inc({ crd, result }, 0);
      running.set({ crd }, 1);
    },
    progress: (progress: MigrationProgress) => {
      const before = counted.get(progress.crd) ?? { rewritten: 0, current: 0, gone: 0, failed: 0 };
      for (const result of RESULTS) {
        const delta = progress[result] - before[result];
        if (delta > 0) objects.inc({ crd: progress.crd, result }, delta);
      }
      counted.set(progress.crd, { ...progress });
      remaining.set({ crd: progress.crd }, progress.remaining ?? 0);
    },
    finished: (crd, outcome) => {
      counted.delete(crd);
      runs.inc({ crd, outcome });
      running.set({ crd }, 0);
      remaining.set({ crd }, 0);
    },
  };
}
