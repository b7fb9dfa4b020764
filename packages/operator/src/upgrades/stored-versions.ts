// What a CRD's `status.storedVersions` asks of a migration, read from the CRD alone: whether
// objects may still be stored in a version other than the storage version, where to list
// and rewrite them, and the status patch that trims the list once they are rewritten.
import type { ResourceDescriptor } from '@nestor/core';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';

export type CustomResourceDefinitionObject = V1CustomResourceDefinition;

/** A migration one CRD needs: every object rewritten in `storage`, then `storedVersions` trimmed to it. */
export interface StorageMigrationPlan {
  /** The CRD's name, `<plural>.<group>`. */
  crd: string;
  /** The version objects are stored in when written now (the version marked `storage: true`). */
  storage: string;
  /** The versions `status.storedVersions` lists besides the storage version. */
  stale: string[];
  /** `status.storedVersions` as read. */
  storedVersions: string[];
  /**
   * Where objects are listed and rewritten: the storage version when it is served (no
   * conversion on the way), else the first served version.
   */
  resource: ResourceDescriptor;
}

/**
 * The migration `crd` needs, or undefined when its `storedVersions` lists only its storage
 * version (nothing to do). Throws for a CRD the API server would not serve objects of: no
 * storage version or no served version.
 */
export function storageMigrationPlan(crd: CustomResourceDefinitionObject): StorageMigrationPlan | undefined {
  const name = crd.metadata?.name ?? `${crd.spec.names.plural}.${crd.spec.group}`;
  const versions = crd.spec.versions ?? [];
  const storage = versions.find((version) => version.storage)?.name;
  if (!storage) throw new Error(`the CRD ${name} marks no version storage: true`);
  const storedVersions = crd.status?.storedVersions ?? [];
  const stale = storedVersions.filter((version) => version !== storage);
  if (stale.length === 0) return undefined;
  const served =
    versions.find((version) => version.name === storage && version.served) ?? versions.find((v) => v.served);
  if (!served) {
    throw new Error(
      `the CRD ${name} serves no version, so its objects cannot be read or rewritten: serve one (spec.versions[].served) to migrate them`,
    );
  }
  return {
    crd: name,
    storage,
    stale,
    storedVersions,
    resource: {
      group: crd.spec.group,
      version: served.name,
      kind: crd.spec.names.kind,
      plural: crd.spec.names.plural,
      namespaced: crd.spec.scope === 'Namespaced',
    },
  };
}

/**
 * Why the migration planned as `plan` must not trim `storedVersions` of `crd` as it is now,
 * or undefined when it may: the storage version changed since, or a version was stored
 * meanwhile that the rewrite may have missed (a version made storage and back during the run).
 */
export function whyNotTrim(plan: StorageMigrationPlan, crd: CustomResourceDefinitionObject): string | undefined {
  const now = crd.spec.versions.find((version) => version.storage)?.name;
  if (now !== plan.storage) return `its storage version changed from ${plan.storage} to ${now} during the migration`;
  const added = (crd.status?.storedVersions ?? []).filter((version) => !plan.storedVersions.includes(version));
  if (added.length) return `${added.join(', ')} became a stored version during the migration`;
  return undefined;
}

/**
 * The merge patch of the CRD's status subresource that sets `storedVersions` to the storage
 * version alone, guarded by the resourceVersion the check above read (a 409 if it changed).
 */
export function trimStoredVersionsPatch(plan: StorageMigrationPlan, resourceVersion: string | undefined): object {
  return {
    metadata: { ...(resourceVersion ? { resourceVersion } : {}) },
    status: { storedVersions: [plan.storage] },
  };
}
