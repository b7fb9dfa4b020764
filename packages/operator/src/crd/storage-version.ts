// The version a kind is stored at in etcd, from the @CustomResource classes of its versions
// loaded in this process, as the CRD generator picks it.
import { allVersionsOf, getCustomResourceMetadata } from './custom-resource.decorator.js';
import type { ClassType } from './field.decorator.js';

/**
 * The storage version of the kind of a `@CustomResource` class: the version marked
 * `{ storage: true }`, else the only one not marked `{ storage: false }`; undefined when
 * that is ambiguous (the CRD generator refuses it) or the class is no custom resource.
 */
export function storageVersionOf(target: ClassType): string | undefined {
  if (!getCustomResourceMetadata(target)) return undefined;
  const versions = allVersionsOf([target]).map((version) => getCustomResourceMetadata(version)!);
  const marked = versions.filter((metadata) => metadata.options.storage === true);
  const unmarked = versions.filter((metadata) => metadata.options.storage === undefined);
  const storage = marked.length ? marked : unmarked.length === 1 ? unmarked : [];
  return storage.length === 1 ? storage[0]!.version : undefined;
}

/**
 * Why a controller that reads and writes a kind through the class of a version other than
 * its storage version costs every later write a conversion; undefined when it is the
 * storage version (or there is one version, or no known storage version).
 */
export function nonStorageVersionWarning(
  controller: string,
  role: 'reconciles' | 'owns',
  target: ClassType,
): string | undefined {
  const metadata = getCustomResourceMetadata(target);
  const storage = storageVersionOf(target);
  if (!metadata || !storage || storage === metadata.version) return undefined;
  const kind = `${metadata.plural}.${metadata.group}`;
  return (
    `${controller} ${role} ${metadata.kind} at ${metadata.version} (${target.name}), but ${kind} is stored at ${storage}: ` +
    `its writes leave managedFields entries of ${metadata.version}, so every later write of such an object at another ` +
    'version, by anyone, goes through the conversion webhook (/convert), and stalls while the operator is down. ' +
    `Use the class of ${storage} in the controller (docs/webhooks.md, "Which version a controller writes")`
  );
}
