// The controllers a manager runs on this replica's shard, and what sharding asks of them:
// their options narrowed to the shard (informers, reconciler, timers), the children found
// through their owned informers for the hand-over, and a child's shard label as the client
// writes it. The manager holds one only when sharded; the rest of the runtime knows nothing
// of shards but the ShardingHooks seam.
import { type KubeObject, type ResourceDescriptor, resourceName } from '@nestor/core';
import type { ManagedController, ManagedControllerOptions } from '../controller/managed-controller.js';
import type { ShardedChild, ShardingHooks } from '../controller/sharding-hooks.js';

export class ShardedControllers {
  private readonly controllers = new Set<ManagedController<KubeObject>>();

  constructor(private readonly scope: ShardingHooks) {
    // The hand-over finds an owner's children in the sharded controllers' owned informers.
    scope.useChildren((owner, object) => this.childrenOf(owner, object));
  }

  /** The shard's id, for logs. */
  get shardId(): string | undefined {
    return this.scope.shardId;
  }

  get size(): number {
    return this.controllers.size;
  }

  has(controller: ManagedController<KubeObject>): boolean {
    return this.controllers.has(controller);
  }

  [Symbol.iterator](): IterableIterator<ManagedController<KubeObject>> {
    return this.controllers.values();
  }

  /** Whether a controller of these options runs on the shard's objects: it has a kind and is not `sharded: false`. */
  shards(options: Pick<ManagedControllerOptions<KubeObject>, 'resource' | 'sharded'>): boolean {
    return Boolean(options.resource && options.sharded !== false);
  }

  /** What a sharded controller's options become: its informers on the shard's objects, its reconciler and timers guarded. */
  narrow<T extends KubeObject>(options: ManagedControllerOptions<T>): Partial<ManagedControllerOptions<T>> {
    const scope = this.scope;
    const resource = options.resource as ResourceDescriptor<T>;
    return {
      shard: {
        selector: scope.selector,
        bypass: (object: KubeObject) => scope.bypassesPredicates(object),
        childSeen: (owned: ResourceDescriptor, child: KubeObject) => scope.childSeen(resource, owned, child),
      },
      reconcile: scope.wrap(resource, options.reconcile),
      ...(options.timers ? { timers: options.timers.map((timer) => scope.wrapTimer(resource, timer)) } : {}),
    };
  }

  /** Records a sharded controller, and the objects it watches in each of its namespaces (the assigner labels no others). */
  add<T extends KubeObject>(controller: ManagedController<T>, options: ManagedControllerOptions<T>): void {
    this.controllers.add(controller as unknown as ManagedController<KubeObject>);
    const owned = (options.owns ?? []).map((entry) => ('resource' in entry ? entry.resource : entry));
    const { labelSelector, fieldSelector } = options;
    for (const namespace of options.namespaces ?? [options.namespace]) {
      this.scope.addKinds(options.resource!, owned, {
        ...(namespace ? { namespace } : {}),
        ...(labelSelector ? { labelSelector } : {}),
        ...(fieldSelector ? { fieldSelector } : {}),
      });
    }
  }

  /** Objects the sharded controllers cache: this shard's share of their kinds and of their children. */
  get objects(): number {
    let total = 0;
    for (const controller of this.controllers) total += controller.cachedObjects + controller.cachedChildren;
    return total;
  }

  /** Of these, the children (objects of the sharded controllers' owned kinds). */
  get children(): number {
    let total = 0;
    for (const controller of this.controllers) total += controller.cachedChildren;
    return total;
  }

  /**
   * The shard label of a child the client writes, when its controller owner is a cached
   * object of a sharded controller that owns the child's kind (so, this shard's): the
   * child is born in its owner's shard. Undefined for anything else.
   */
  childLabels(child: KubeObject, resource: ResourceDescriptor): Record<string, string> | undefined {
    const ref = child.metadata?.ownerReferences?.find((r) => r.controller === true);
    if (!ref) return undefined;
    for (const controller of this.controllers) {
      const owner = controller.ownerOf(ref, child.metadata?.namespace, resource);
      if (!owner) continue;
      const fresh = !controller.cachesChild(resource, child);
      return this.scope.childLabels(owner, fresh ? { resource, object: child } : undefined);
    }
    return undefined;
  }

  /**
   * The cached children of a sharded owner, of every kind a sharded controller of its kind
   * owns, except the kinds some sharded controller reconciles as its primary (those are
   * drained on their own).
   */
  private childrenOf(owner: ResourceDescriptor, object: KubeObject): ShardedChild[] {
    const name = resourceName(owner);
    const primaries = new Set<string>();
    for (const controller of this.controllers) primaries.add(resourceName(controller.resource!));
    const seen = new Set<string>();
    const children: ShardedChild[] = [];
    for (const controller of this.controllers) {
      if (resourceName(controller.resource!) !== name) continue;
      for (const child of controller.childrenOf(object)) {
        const kind = resourceName(child.resource);
        const id = `${kind}/${child.object.metadata?.namespace ?? ''}/${child.object.metadata?.name ?? ''}`;
        if (primaries.has(kind) || seen.has(id)) continue;
        seen.add(id);
        children.push(child);
      }
    }
    return children;
  }
}
