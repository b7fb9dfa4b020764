// The leader task that keeps the operator's own CRDs migrated to their storage version
// (upgrades/), built from `migrateStorageVersions`: which CRDs, at what pace, reporting to
// the operator's metrics, logs and Event recorder.
import { resourceName, type RuntimeLogger, type Transport } from '@nestor/core';
import {
  allVersionsOf,
  getCustomResourceMetadata,
  loadedCustomResourceNames,
} from '../crd/custom-resource.decorator.js';
import type { ClassType } from '../crd/field.decorator.js';
import type { OperatorMetrics } from '../metrics/operator-metrics.js';
import type { Manager } from '../runtime/manager/manager.js';
import { StorageVersionMigrations } from '../upgrades/storage-migrations.js';
import type { OperatorOptions } from './operator-options.js';

/**
 * The migrations `options.migrateStorageVersions` asks for, or undefined when off: on by
 * default for an operator that watches every namespace; one that watches one namespace has
 * no rights on the others (where objects of its kinds may be too), so it migrates only when
 * told to.
 */
export function storageMigrationTask(
  transport: Transport,
  manager: Manager,
  metrics: OperatorMetrics,
  options: OperatorOptions,
  logger: (context: string) => RuntimeLogger,
): StorageVersionMigrations | undefined {
  const given = options.migrateStorageVersions ?? !options.namespace;
  if (given === false) return undefined;
  const settings = given === true ? {} : given;
  const explicit = settings.kinds?.map(crdNameOf);
  return new StorageVersionMigrations(transport, {
    ...settings,
    crds: () => explicit ?? ownedCustomResourceDefinitions(manager, options),
    logger: logger('StorageVersionMigration'),
    // Registered on first use: an operator that never migrates exports none of these metrics.
    metrics: {
      started: (crd) => metrics.migrationSink().started(crd),
      progress: (progress) => metrics.migrationSink().progress(progress),
      finished: (crd, outcome) => metrics.migrationSink().finished(crd, outcome),
    },
    events: manager.events,
  });
}

/**
 * The CRDs the operator owns, by name: those of the kinds its controllers reconcile, own
 * and watch that a `@CustomResource` class loaded in this process defines (the CRDs
 * `nestor manifests` writes for it; a kind given by a plain descriptor is another
 * project's), and those `installCustomResources` lists.
 */
export function ownedCustomResourceDefinitions(manager: Manager, options: OperatorOptions): string[] {
  const defined = loadedCustomResourceNames();
  const names = new Set<string>();
  for (const name of manager.controllerNames) {
    for (const informer of manager.getController(name)?.informers ?? []) {
      const kind = resourceName(informer.resource);
      if (defined.has(kind)) names.add(kind);
    }
  }
  const installed = options.installCustomResources;
  if (Array.isArray(installed)) for (const target of allVersionsOf(installed)) names.add(crdNameOf(target));
  return [...names].sort();
}

/** `widgets.example.com` for a `@CustomResource` class or a CRD name. */
function crdNameOf(kind: ClassType | string): string {
  if (typeof kind === 'string') {
    if (!/^[a-z0-9-]+\.[a-z0-9.-]+$/.test(kind))
      throw new Error(
        `migrateStorageVersions.kinds: "${kind}" is no CRD name: give <plural>.<group>, e.g. widgets.example.com`,
      );
    return kind;
  }
  const metadata = getCustomResourceMetadata(kind);
  if (!metadata)
    throw new Error(
      `migrateStorageVersions.kinds: ${kind.name} is not decorated with @CustomResource({ group, version, kind })`,
    );
  return `${metadata.plural}.${metadata.group}`;
}
