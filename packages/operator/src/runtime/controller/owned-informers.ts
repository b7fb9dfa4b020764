import { keyOf, resourceName, type KubeObject, type ResourceDescriptor } from '@nestor/core';
import { OWNER_INDEX, type Informer } from '../cache/informer.js';

/**
 * A controller's informers of the kinds it owns, and what the sharding hand-over asks of
 * them: an owner's children through the owner index, whether a child is in them. An owned
 * kind watched for events only keeps a skeleton per child (its key, resourceVersion, labels
 * and owner references: all the hand-over reads), so this works whatever they keep.
 */
export class OwnedInformers {
  private readonly entries: Array<{ resource: ResourceDescriptor; informer: Informer<KubeObject> }> = [];

  add(resource: ResourceDescriptor, informer: Informer<KubeObject>): void {
    this.entries.push({ resource, informer });
  }

  /** Children in the informers (skeletons included). */
  get size(): number {
    let total = 0;
    for (const { informer } of this.entries) total += informer.size;
    return total;
  }

  /** Whether the controller owns the kind. */
  owns(resource: ResourceDescriptor): boolean {
    const name = resourceName(resource);
    return this.entries.some((entry) => resourceName(entry.resource) === name);
  }

  /** The children in the informers whose controller owner is `owner` (by UID). */
  childrenOf(owner: KubeObject): Array<{ resource: ResourceDescriptor; object: KubeObject }> {
    const uid = owner.metadata?.uid;
    if (!uid) return [];
    const children: Array<{ resource: ResourceDescriptor; object: KubeObject }> = [];
    for (const { resource, informer } of this.entries) {
      for (const object of informer.byIndex(OWNER_INDEX, uid)) children.push({ resource, object });
    }
    return children;
  }

  /** Whether an informer of kind `resource` holds `child`. */
  holds(resource: ResourceDescriptor, child: KubeObject): boolean {
    const name = resourceName(resource);
    const key = keyOf({ namespace: child.metadata?.namespace, name: child.metadata?.name ?? '' });
    return this.entries.some((entry) => resourceName(entry.resource) === name && entry.informer.get(key) !== undefined);
  }
}
