// The rules on a CRD as a whole, old against new: its scope, the versions it stores and
// serves, the subresources; for each version both CRDs have, its schema (schema-changes.ts);
// and the versions served without a conversion (unconverted-versions.ts).
import type { CrdChange } from './compatibility-rules.js';
import type { ComparedCrd, ComparedVersion } from './compared-crd.js';
import { compareSchemas } from './schema-changes.js';
import { canonicalJson, shownPath } from './schema-keywords.js';
import { compareUnconverted } from './unconverted-versions.js';

/**
 * Every breaking change from one CRD to the next. `stored` is what the cluster's
 * status.storedVersions lists, when known; unknown, any version the old CRD had may hold
 * objects. `note` hears what is worth saying but breaks nothing.
 */
export function compareCrds(
  before: ComparedCrd,
  after: ComparedCrd,
  stored: readonly string[] | undefined,
  emit: (change: CrdChange) => void,
  note: (text: string) => void,
): void {
  if (before.scope !== after.scope) {
    emit({ rule: 'scope-changed', path: 'spec.scope', change: `scope ${before.scope} -> ${after.scope}` });
  }
  const next = new Map(after.versions.map((version) => [version.name, version]));
  for (const version of before.versions) {
    const now = next.get(version.name);
    const path = `spec.versions[${version.name}]`;
    if (!now) removedVersion(version, stored, path, emit);
    if (version.served && !now?.served) {
      const what = now ? 'is no longer served' : 'is removed';
      if (version.deprecated)
        note(`${after.name}: ${version.name}, deprecated, ${what}: clients still using it get 404s`);
      else
        emit({
          rule: 'served-version-removed',
          version: version.name,
          path,
          change: `${version.name} was served and ${what}`,
        });
    }
    if (!now) continue;
    compareSchemas(version.schema, now.schema, (rule, at, change) =>
      emit({ rule, version: version.name, path: shownPath(at), change }),
    );
    compareSubresources(version, now, `${path}.subresources`, emit);
  }
  for (const name of stored ?? []) {
    if (!next.has(name) && !before.versions.some((version) => version.name === name)) {
      emit({
        rule: 'stored-version-removed',
        version: name,
        path: `spec.versions[${name}]`,
        change: `status.storedVersions lists ${name}, which the CRD no longer has`,
      });
    }
  }
  compareUnconverted(before, after, stored, emit);
}

function removedVersion(
  version: ComparedVersion,
  stored: readonly string[] | undefined,
  path: string,
  emit: (change: CrdChange) => void,
): void {
  const change = stored
    ? stored.includes(version.name)
      ? `${version.name} is removed while status.storedVersions lists it (${stored.join(', ')})`
      : undefined
    : version.storage
      ? `${version.name}, the storage version, is removed: objects are stored in it`
      : `${version.name} is removed and may still hold objects: the cluster's storedVersions were not given`;
  if (change) emit({ rule: 'stored-version-removed', version: version.name, path, change });
}

function compareSubresources(
  before: ComparedVersion,
  after: ComparedVersion,
  path: string,
  emit: (change: CrdChange) => void,
): void {
  if (before.status !== after.status) {
    emit({
      rule: 'subresource-changed',
      version: before.name,
      path: `${path}.status`,
      change: before.status
        ? 'status subresource removed: status is written with the object again, and /status answers 404'
        : 'status subresource added: writes of the object ignore its status from now on',
    });
  }
  if (before.scale && (!after.scale || canonicalJson(before.scale) !== canonicalJson(after.scale))) {
    emit({
      rule: 'subresource-changed',
      version: before.name,
      path: `${path}.scale`,
      change: after.scale ? 'scale subresource paths changed' : 'scale subresource removed',
    });
  }
}
