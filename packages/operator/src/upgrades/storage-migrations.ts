// The operator's storage-version migrations, run by its leader: each CRD it owns watched,
// and migrated (storage-version-migration.ts) when its storedVersions lists more than its
// storage version: when the operator takes the lead after an upgrade that changed the
// storage version, or when the CRD is changed so while it runs.
import { KubeApiError, type KubeObject, type RuntimeLogger, silentLogger, type Transport } from '@nestor/core';
import type { Subscription } from 'rxjs';
import type { EventRecorder } from '../client/event-recorder.js';
import { CustomResourceDefinition } from '../client/kinds.js';
import type { LeaderTask, Leading } from '../runtime/manager/leader-tasks.js';
import { watch } from '../runtime/watch/watch.js';
import {
  describeCounts,
  migrateStorageVersion,
  type MigrationOutcome,
  type MigrationProgress,
  type MigrationResult,
  type StorageMigrationOptions,
} from './storage-version-migration.js';
import { storageMigrationPlan, type CustomResourceDefinitionObject } from './stored-versions.js';

/** Where the migrations report (OperatorMetrics binds it to Prometheus). */
export interface StorageMigrationMetrics {
  /** A migration of `crd` starts. */
  started(crd: string): void;
  /** After each page of objects: the counts of the migration so far, and what is left. */
  progress(progress: MigrationProgress): void;
  /** A migration of `crd` ended: its outcome, or `failed` when it could not go on. */
  finished(crd: string, outcome: MigrationOutcome | 'failed'): void;
}

export interface StorageVersionMigrationsOptions extends StorageMigrationOptions {
  /** The CRDs to keep migrated, by name (`widgets.example.com`): read at the start of each term of leadership. */
  crds: () => readonly string[];
  logger?: RuntimeLogger;
  metrics?: StorageMigrationMetrics;
  /** Where the Events about each CRD go (the manager's recorder). */
  events?: Pick<EventRecorder, 'record'>;
  /** How long before a migration that failed or ended incomplete is tried again (default 5 min). */
  retryMs?: number;
}

/**
 * The operator's storage-version migrations, a leader task (`Manager.addLeaderTask`): while
 * this replica leads, one watch per CRD (by `metadata.name`, so that RBAC may name the CRDs),
 * and a migration of each CRD whose storedVersions lists more than its storage version, one
 * CRD at a time. Each migration is logged, counted in metrics and told by Events on its CRD.
 * A CRD it may not read is reported once and left alone until the next term.
 */
export class StorageVersionMigrations implements LeaderTask {
  readonly name = 'storage-version-migration';
  private readonly log: RuntimeLogger;

  constructor(
    private readonly transport: Transport,
    private readonly options: StorageVersionMigrationsOptions,
  ) {
    this.log = options.logger ?? silentLogger;
  }

  async run(leading: Leading): Promise<void> {
    const names = [...new Set(this.options.crds())];
    if (names.length === 0) return;
    const { signal } = leading;
    const latest = new Map<string, CustomResourceDefinitionObject>();
    const due = new Set<string>();
    const timers = new Set<NodeJS.Timeout>();
    let ring = () => {};
    const mark = (name: string) => {
      due.add(name);
      ring();
    };
    signal.addEventListener('abort', () => ring(), { once: true });
    const watches = names.map((name) =>
      this.watchDefinition(name, (crd) => {
        latest.set(name, crd);
        if (needsMigration(crd)) mark(name);
      }),
    );
    try {
      while (!signal.aborted) {
        const [name] = due;
        if (name === undefined) {
          await new Promise<void>((resolve) => (ring = resolve));
          continue;
        }
        due.delete(name);
        const crd = latest.get(name);
        if (!crd || !needsMigration(crd)) continue;
        const again = await this.migrate(crd, leading);
        if (again === 'now') mark(name);
        else if (again === 'later') {
          const timer = setTimeout(() => {
            timers.delete(timer);
            mark(name);
          }, this.options.retryMs ?? 300_000);
          timer.unref();
          timers.add(timer);
        }
      }
    } finally {
      for (const subscription of watches) subscription.unsubscribe();
      for (const timer of timers) clearTimeout(timer);
    }
  }

  /** The CRD's changes; a refusal (RBAC) stops its watch with one warning that says what to grant. */
  private watchDefinition(name: string, changed: (crd: CustomResourceDefinitionObject) => void): Subscription {
    const subscription: Subscription = watch(this.transport, CustomResourceDefinition, {
      fieldSelector: `metadata.name=${name}`,
      logger: this.log,
      onError: (error) => {
        if (!(error instanceof KubeApiError && (error.status === 401 || error.status === 403))) return;
        this.log.warn(
          `storage-version migration: cannot watch the CRD ${name} (HTTP ${error.status}), so its objects are not migrated: ` +
            'the operator needs get, list and watch on it, patch on its status and list and patch on its kind ' +
            `(nestor manifests writes them, in the ClusterRole <name>-storage-migration), or set migrateStorageVersions: false`,
        );
        subscription.unsubscribe();
      },
    }).subscribe((event) => {
      if (event.type === 'ADDED' || event.type === 'MODIFIED') changed(event.object as CustomResourceDefinitionObject);
    });
    return subscription;
  }

  /** One migration, reported; whether to run it again: 'now' (the CRD changed under it), 'later' (it failed), or not. */
  private async migrate(crd: CustomResourceDefinitionObject, leading: Leading): Promise<'now' | 'later' | undefined> {
    const name = crd.metadata!.name!;
    const { metrics } = this.options;
    const about = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: crd.metadata! };
    const event = (type: 'Normal' | 'Warning', reason: string, note: string) =>
      this.options.events?.record(about as KubeObject, type, reason, note);
    const plan = storageMigrationPlan(crd);
    if (plan) {
      metrics?.started(name);
      event(
        'Normal',
        'StorageVersionMigrationStarted',
        `rewriting every object stored as ${plan.stale.join(', ')} in ${plan.storage}`,
      );
    }
    let result: MigrationResult;
    try {
      result = await migrateStorageVersion(this.transport, name, {
        ...this.rate(),
        signal: leading.signal,
        logger: this.log,
        assertWritable: () => leading.assertLeading(),
        ...(metrics ? { onProgress: (progress: MigrationProgress) => metrics.progress(progress) } : {}),
      });
    } catch (error) {
      if (leading.signal.aborted) return undefined; // the next leader starts it again
      metrics?.finished(name, 'failed');
      const message = `storage-version migration of ${name} failed: ${(error as Error).message}; trying again in ${this.retryMinutes()}`;
      this.log.error(message);
      event('Warning', 'StorageVersionMigrationFailed', message);
      return 'later';
    }
    metrics?.finished(name, result.outcome);
    const summary = `${describeCounts(result)} in ${result.seconds.toFixed(1)} s`;
    switch (result.outcome) {
      case 'migrated':
        event(
          'Normal',
          'StorageVersionMigrated',
          `${summary}; storedVersions is now [${result.storedVersions.join(', ')}]`,
        );
        return undefined;
      case 'incomplete':
        event(
          'Warning',
          'StorageVersionMigrationIncomplete',
          `${summary}; storedVersions kept; first failure: ${result.failures[0]?.object}: ${result.failures[0]?.reason}; trying again in ${this.retryMinutes()}`,
        );
        return 'later';
      case 'superseded':
        return 'now';
      case 'current':
        return undefined;
    }
  }

  private rate(): StorageMigrationOptions {
    const { writesPerSecond, concurrency, pageSize } = this.options;
    return {
      ...(writesPerSecond !== undefined ? { writesPerSecond } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(pageSize !== undefined ? { pageSize } : {}),
    };
  }

  private retryMinutes(): string {
    const ms = this.options.retryMs ?? 300_000;
    return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
  }
}

/** True when the CRD lists a stored version besides its storage version (or cannot be read so: the migration says why). */
function needsMigration(crd: CustomResourceDefinitionObject): boolean {
  try {
    return storageMigrationPlan(crd) !== undefined;
  } catch {
    return true;
  }
}
