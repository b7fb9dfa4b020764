// Versions served without a conversion: with `strategy: None` the API server serves an object
// stored in one version in every other with only its apiVersion changed. A new such pair
// whose schemas differ in shape needs a conversion; one of the same shape is held to the
// schema rules, as a release that changed the one version into the other.
import type { CrdChange } from './compatibility-rules.js';
import type { ComparedCrd, ComparedVersion } from './compared-crd.js';
import { compareSchemas } from './schema-changes.js';
import { shownPath } from './schema-keywords.js';
import { shapeDifference } from './schema-shape.js';

/**
 * The breaking changes of the pairs (a version that holds objects, a version that serves
 * them) the new CRD serves without conversion and the old one did not.
 */
export function compareUnconverted(
  before: ComparedCrd,
  after: ComparedCrd,
  stored: readonly string[] | undefined,
  emit: (change: CrdChange) => void,
): void {
  const known = new Set(
    unconvertedPairs(before, stored, []).pairs.map(([holder, served]) => `${holder.name}>${served.name}`),
  );
  const { pairs, holding } = unconvertedPairs(after, stored, [before.storageVersion]);
  const reported = new Set<string>();
  for (const [holder, served] of pairs) {
    if (known.has(`${holder.name}>${served.name}`)) continue;
    const difference = shapeDifference(holder.schema, served.schema);
    if (!difference) {
      compareSchemas(holder.schema, served.schema, (rule, at, change) =>
        emit({
          rule,
          version: served.name,
          path: shownPath(at),
          change: `${change}, for objects stored as ${holder.name} and served as ${served.name} without conversion`,
        }),
      );
      continue;
    }
    // Once a pair: a conversion answers both ways.
    const pair = [holder.name, served.name].sort().join('|');
    if (reported.has(pair)) continue;
    reported.add(pair);
    emit({
      rule: 'conversion-missing',
      // The version that serves others' objects; of two holders, the storage version.
      version: !holding.has(served.name) || served.name === after.storageVersion ? served.name : holder.name,
      path: 'spec.conversion',
      change: `objects stored as ${holder.name} are served as ${served.name} with only their apiVersion changed, and the schemas differ at ${difference}`,
    });
  }
}

/**
 * Without a conversion webhook, each version that holds objects (the storage version, what
 * storedVersions lists, and `holders`) with each other served version.
 */
function unconvertedPairs(
  crd: ComparedCrd,
  stored: readonly string[] | undefined,
  holders: string[],
): { pairs: Array<[ComparedVersion, ComparedVersion]>; holding: Set<string> } {
  const byName = new Map(crd.versions.map((version) => [version.name, version]));
  const holding = new Set([crd.storageVersion, ...(stored ?? []), ...holders].filter((name) => byName.has(name)));
  if (crd.conversion === 'Webhook') return { pairs: [], holding };
  const pairs: Array<[ComparedVersion, ComparedVersion]> = [];
  for (const holder of holding) {
    for (const served of crd.versions) {
      if (served.served && served.name !== holder) pairs.push([byName.get(holder)!, served]);
    }
  }
  return { pairs, holding };
}
