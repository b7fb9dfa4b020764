import type { KubeObject, ObjectMeta, OwnerReference } from '@nestor/core';

/** What a skeleton's metadata holds, no more. */
export type SkeletonMeta = Pick<
  ObjectMeta,
  'name' | 'namespace' | 'resourceVersion' | 'generation' | 'labels' | 'ownerReferences'
>;

/** Distinct owner-reference lists and label sets held before a pool starts over: a bound on its memory. */
const MAX_SHARED = 4096;

/**
 * What an informer that only maps events keeps of each object (kube-rs keeps nothing of an
 * owned kind): its key, its resourceVersion (a resync tells changes by it), its generation,
 * its labels (what mappers and the shard hand-over read) and its owner references (the
 * owned kinds' mapping and the owner index), so that an update's old object, a resync's
 * deletion and a late subscriber's replay map as the whole object would. The rest of the
 * object (data, spec, status, annotations) is garbage once the event is mapped. Every
 * skeleton has the same shape (one hidden class), and skeletons with equal owner
 * references or labels share one copy (the children of one owner usually have both the
 * same): a bounded pool per informer, like the watch's StringPool. Skeletons are read-only.
 */
export class Skeletons {
  private readonly owners = new Map<string, OwnerReference[]>();
  private readonly labels = new Map<string, Record<string, string>>();

  /** The skeleton of a freshly decoded object (its own strings, shared lists and labels). */
  readonly of = (object: KubeObject): KubeObject => {
    const metadata = object.metadata;
    const kept: SkeletonMeta = {
      name: metadata?.name,
      namespace: metadata?.namespace,
      resourceVersion: metadata?.resourceVersion,
      generation: metadata?.generation,
      labels: metadata?.labels && shared(this.labels, labelsKey(metadata.labels), metadata.labels),
      ownerReferences:
        metadata?.ownerReferences && shared(this.owners, ownersKey(metadata.ownerReferences), metadata.ownerReferences),
    };
    return { apiVersion: object.apiVersion, kind: object.kind, metadata: kept };
  };
}

/** The pooled value under `key`, or `value`, pooled; undefined keys (unusual values) are not pooled. */
function shared<V>(pool: Map<string, V>, key: string | undefined, value: V): V {
  if (key === undefined) return value;
  const known = pool.get(key);
  if (known !== undefined) return known;
  if (pool.size >= MAX_SHARED) pool.clear();
  pool.set(key, value);
  return value;
}

function ownersKey(owners: readonly OwnerReference[]): string | undefined {
  if (!Array.isArray(owners)) return undefined;
  let key = '';
  for (const ref of owners) {
    if (ref === null || typeof ref !== 'object') return undefined;
    key += `${ref.uid}\u0000${ref.name}\u0000${ref.kind}\u0000${ref.apiVersion}\u0000${ref.controller}\u0000${ref.blockOwnerDeletion}\u0001`;
  }
  return key;
}

function labelsKey(labels: Record<string, string>): string | undefined {
  if (typeof labels !== 'object' || Array.isArray(labels)) return undefined;
  let key = '';
  for (const name in labels) {
    if (!Object.hasOwn(labels, name)) continue;
    const value = labels[name];
    if (typeof value !== 'string') return undefined;
    key += `${name}\u0000${value}\u0001`;
  }
  return key;
}
