import { SetMetadata } from '@nestjs/common';
import type { ObjectRef } from '@nestor/core';
import type { ResourceType } from '../../crd/custom-resource.decorator.js';
import type { Predicate, ResourceEvent } from '../../runtime/controller/predicates.js';
import { OPERATOR_WATCHES_METADATA } from '../operator.constants.js';
import type { ObjectSelector } from '../../client/object-selector.js';
import type { ClusterSelection } from '../../runtime/controller/cluster-selection.js';
import type { KeepChoice } from '../../runtime/cache/keep-choice.js';

/**
 * A namespace known only when the operator starts: called once then, with the module's
 * `namespace` option. `ownNamespace` is one: the namespace the operator runs in.
 */
export type NamespaceOf = (moduleNamespace: string | undefined) => string;

/** What `@Watches` takes besides the kind: the mapper to the reconciled objects, selectors, predicates. */
export interface WatchesOptions extends Omit<ObjectSelector, 'namespace'> {
  /**
   * Only objects in this namespace (default: the module's `namespace` option, else all).
   * `ownNamespace` watches the operator's own namespace (POD_NAMESPACE in a pod), and
   * `nestor manifests` grants the rights there; another function is called at start-up
   * with the module's namespace, and `nestor manifests` cannot know its answer, so it
   * grants the kind cluster-wide.
   */
  namespace?: string | NamespaceOf;
  /** Only objects in these namespaces, one informer each. Not with `namespace`. */
  namespaces?: string[];
  /**
   * Watch only the objects' metadata (PartialObjectMetadata): the method gets apiVersion,
   * kind and metadata, no spec or status. For kinds the controller only maps.
   */
  metadataOnly?: boolean;
  /**
   * What the kind's informer keeps: 'objects' (cached from the start), 'metadata', or 'none'
   * (a skeleton per object for good). Left out: with `predicates`, what it watches (they
   * compare old objects with new); without, the module's `cache.keep`, else a skeleton per
   * object until the first read of the kind from the cache. The method gets every event's
   * whole object either way; `event.old` is then a skeleton (name, namespace,
   * resourceVersion, generation, labels, owner references).
   */
  keep?: KeepChoice;
  /** Events of the watched kind that fail one of these are not mapped (`generationChanged`, `labelsChanged`, ...). */
  predicates?: Predicate<never>[];
  /**
   * With the module's `fleet`: watch the kind in member clusters ('members'), in those and
   * the operator's own ('all'), or in the members a function picks; the method's event names
   * the member (`event.cluster`), and the requests it returns are in the operator's cluster.
   */
  clusters?: ClusterSelection;
}

export interface WatchesMetadata {
  resource: ResourceType;
  options: WatchesOptions;
}

/**
 * What a `@Watches` method is: synchronous (it runs for each event of the watched kind, so
 * it reads the cache, not the API server), given the watched object as it is now (on a
 * deletion, as it was last seen) and the event (`type`: added, updated or deleted; `old`:
 * the object before an update). It answers with the objects of the controller's kind to
 * reconcile: a list, one, or `undefined`/`[]` for none, or a promise of them (a mapper may
 * read the cache: `kube.list(Kind, { index })`). A mapper that throws (or rejects, or takes
 * over 30 s) skips the event; it is logged and counted, and the watch goes on.
 */
export type WatchesMapper<W = never> = (
  watched: W,
  event: ResourceEvent<W>,
) => ObjectRef[] | ObjectRef | undefined | null | Promise<ObjectRef[] | ObjectRef | undefined | null>;

/**
 * Marks a method that maps an object of another kind to the requests of the controller's
 * own kind it affects, as controller-runtime's `Watches(..., EnqueueRequestsFromMapFunc)`:
 * `(object, event) => ObjectRef[] | ObjectRef | undefined` (see `WatchesMapper`). The kind
 * is cached by the shared informer cache; its rights (get, list, watch) go into the RBAC
 * `nestor manifests` writes.
 *
 * ```ts
 * @Watches(ConfigMap, { namespace: ownNamespace, labelSelector: 'cache.example.com/backups' })
 * backupsChanged(configMap: ConfigMap): ObjectRef | undefined {
 *   // The ConfigMap names the CacheCluster it configures: "<namespace>/<name>".
 *   const [namespace, name] = configMap.metadata?.annotations?.['cache.example.com/cluster']?.split('/') ?? [];
 *   return namespace && name ? { namespace, name } : undefined;
 * }
 * ```
 */
export function Watches(resource: ResourceType, options: WatchesOptions = {}): MethodDecorator {
  return SetMetadata(OPERATOR_WATCHES_METADATA, { resource, options } satisfies WatchesMetadata);
}
