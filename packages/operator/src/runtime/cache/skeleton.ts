import type { KubeObject, ObjectMeta } from '@nestor/core';

/** What a skeleton's metadata holds, no more. */
export type SkeletonMeta = Pick<
  ObjectMeta,
  'name' | 'namespace' | 'resourceVersion' | 'generation' | 'labels' | 'ownerReferences'
>;

/**
 * What an informer that only maps events keeps of an object (kube-rs keeps nothing of an
 * owned kind): its key, its resourceVersion (a resync tells changes by it), its generation,
 * its labels (what mappers and the shard hand-over read) and its owner references (the
 * owned kinds' mapping and the owner index), so that an update's old object, a resync's
 * deletion and a late subscriber's replay map as the whole object would. The fields are the
 * decoded object's own (no copies); the rest of it (data, spec, status, annotations) is
 * garbage once the event is mapped. Every skeleton has the same shape: one hidden class.
 */
export function skeletonOf(object: KubeObject): KubeObject {
  const metadata = object.metadata;
  const kept: SkeletonMeta = {
    name: metadata?.name,
    namespace: metadata?.namespace,
    resourceVersion: metadata?.resourceVersion,
    generation: metadata?.generation,
    labels: metadata?.labels,
    ownerReferences: metadata?.ownerReferences,
  };
  return { apiVersion: object.apiVersion, kind: object.kind, metadata: kept };
}
