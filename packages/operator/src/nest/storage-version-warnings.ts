import { nonStorageVersionWarning } from '../crd/storage-version.js';
import type { ClassType } from '../crd/field.decorator.js';
import { isOwnedKind } from './controller-metadata.js';
import type { DiscoveredController } from './operator.explorer.js';

/** Controller/kind pairs already warned about in this process: a controller added again (a new app, a test) is not. */
const warned = new Set<string>();

/**
 * Warns once per controller and kind when a controller reconciles or owns a custom
 * resource through the class of a version that is not its storage version (docs/webhooks.md).
 */
export function warnNonStorageVersions(
  found: Pick<DiscoveredController, 'className' | 'resource' | 'options'>,
  warn: (message: string) => void,
  seen: Set<string> = warned,
): void {
  const name = found.options.name ?? found.className;
  const kinds: Array<['reconciles' | 'owns', unknown]> = [
    ...(found.resource ? [['reconciles', found.resource] as ['reconciles', unknown]] : []),
    ...(found.options.owns ?? []).map((entry): ['owns', unknown] => [
      'owns',
      isOwnedKind(entry) ? entry.resource : entry,
    ]),
  ];
  for (const [role, type] of kinds) {
    // Descriptors (built-in kinds, imported CRDs) say nothing of a storage version.
    if (typeof type !== 'function') continue;
    const message = nonStorageVersionWarning(name, role, type as ClassType);
    const key = `${name}\0${(type as ClassType).name}`;
    if (!message || seen.has(key)) continue;
    seen.add(key);
    warn(message);
  }
}
