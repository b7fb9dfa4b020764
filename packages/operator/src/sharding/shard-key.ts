import { resourceName, type KubeObject, type ResourceDescriptor } from '@nestor/core';

/** What the key needs of an object's kind: its API group ('' for the core group) and kind. */
export interface ShardKind {
  readonly group: string;
  readonly kind: string;
}

/**
 * The ring key of one object: `group/kind/namespace/name` (namespace '' when
 * cluster-scoped). No UID: the key must be computable before the object exists (at
 * creation, where the UID is not yet set) and stay the same if it is recreated.
 */
export function objectShardKey(kind: ShardKind, namespace: string | undefined, name: string): string {
  return `${kind.group}/${kind.kind}/${namespace ?? ''}/${name}`;
}

/**
 * The ring key that decides `object`'s shard: the key of its controller owner when it has
 * one, so that children land with the owner whose reconcile manages them (a child may use
 * generateName then); else its own key. The owner's namespace is taken to be the child's,
 * as an ownerReference cannot name another; a cluster-scoped owner of namespaced children
 * therefore does not share their key. One level only: the owner's own owner is not known
 * from the child.
 */
export function shardKeyOf(kind: ShardKind, object: KubeObject): string {
  const metadata = object.metadata ?? {};
  const owner = metadata.ownerReferences?.find((ref) => ref.controller === true);
  if (owner)
    return objectShardKey({ group: groupOf(owner.apiVersion), kind: owner.kind }, metadata.namespace, owner.name);
  if (!metadata.name) {
    throw new Error(
      `cannot compute the shard key of a ${kind.kind} without metadata.name (generateName is resolved only by ` +
        'the API server, after the shard is chosen): give objects that have no controller owner a name',
    );
  }
  return objectShardKey(kind, metadata.namespace, metadata.name);
}

/** The group of an apiVersion: 'apps' of 'apps/v1', '' of 'v1'. */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * One object of one resource within this replica (`plural.group/namespace/name`), whatever
 * controller or writer handles it: not a ring key (see shardKeyOf).
 */
export function objectId(resource: ResourceDescriptor, object: KubeObject): string {
  return `${resourceName(resource)}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}
