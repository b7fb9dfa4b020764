import { resourceOf, type ResourceType } from '../crd/custom-resource.decorator.js';
import type { ControllerAccess, WatchNamespaces } from './rbac.js';

/**
 * The namespaces the controllers watch, when every one of them watches named namespaces;
 * undefined when any watches all of them. A controller watches its `namespaces` or
 * `namespace` option, else the module's; a `@Watches` its own, else the module's
 * (nest/controller-binding.ts); `ownNamespace` there is `operatorNamespace`, where the
 * operator is deployed. A controller of a cluster-scoped kind needs the cluster; a
 * `@Watches` of one is not counted. With named namespaces, the controllers' rules on
 * namespaced kinds fit a Role in each (`accessIn` says which rules).
 */
export function watchedNamespaces(
  controllers: readonly ControllerAccess[],
  moduleNamespace: string | undefined,
  operatorNamespace?: string,
): string[] | undefined {
  const namespaces = new Set<string>();
  /** False when `scope` is every namespace, or one not known before start-up. */
  const add = (scope: WatchNamespaces | undefined): boolean => {
    const named = namesOf(scope, operatorNamespace);
    for (const namespace of named ?? []) namespaces.add(namespace);
    return named !== undefined;
  };
  for (const controller of controllers) {
    if (controller.resource && !resourceOf(controller.resource).namespaced) return undefined;
    if (!add(controller.namespaces ?? controller.namespace ?? moduleNamespace)) return undefined;
    const watches = controller.watches ?? [];
    for (let i = 0; i < watches.length; i++) {
      // A cluster-scoped kind is watched cluster-wide, whatever namespace is named; its rules go to the ClusterRole.
      if (!resourceOf(watches[i]!).namespaced) continue;
      if (!add(controller.watchNamespaces?.[i] ?? moduleNamespace)) return undefined;
    }
  }
  return namespaces.size ? [...namespaces].sort() : undefined;
}

/**
 * What the controllers do in one of the namespaces `watchedNamespaces` gives: a
 * controller's whole access where it reconciles, and elsewhere only the kinds its
 * `@Watches` watch there. So a namespace that holds only what a controller maps from (its
 * own namespace's ConfigMaps, say) gets only get, list and watch on that kind.
 */
export function accessIn(
  controllers: readonly ControllerAccess[],
  namespace: string,
  moduleNamespace: string | undefined,
  operatorNamespace?: string,
): ControllerAccess[] {
  const covers = (scope: WatchNamespaces | undefined) => namesOf(scope, operatorNamespace)?.includes(namespace) ?? true;
  return controllers.flatMap((controller): ControllerAccess[] => {
    const watches = (controller.watches ?? []).filter((_, i) =>
      covers(controller.watchNamespaces?.[i] ?? moduleNamespace),
    );
    if (covers(controller.namespaces ?? controller.namespace ?? moduleNamespace)) {
      const { watchNamespaces: _, ...rest } = controller;
      return [{ ...rest, watches }];
    }
    return watches.length ? [{ watches }] : [];
  });
}

/**
 * For controllers whose rights are cluster-wide: the `@Watches` of namespaced kinds that name
 * their namespaces (`ownNamespace`'s kubeconfig Secrets, a settings namespace's ConfigMaps)
 * taken out of the cluster-wide access and listed by namespace, for a Role there: a
 * mapper's informer lists and watches that namespace alone, and a ClusterRole would let the
 * operator read that kind (Secrets) in every namespace.
 */
export function namespacedWatches(
  controllers: readonly ControllerAccess[],
  moduleNamespace: string | undefined,
  operatorNamespace?: string,
): { clusterWide: ControllerAccess[]; byNamespace: Map<string, ControllerAccess[]> } {
  const byNamespace = new Map<string, ControllerAccess[]>();
  const clusterWide = controllers.map((controller): ControllerAccess => {
    const watches: ResourceType[] = [];
    const watchNamespaces: (WatchNamespaces | undefined)[] = [];
    (controller.watches ?? []).forEach((kind, i) => {
      const scope = controller.watchNamespaces?.[i];
      const names = resourceOf(kind).namespaced ? namesOf(scope ?? moduleNamespace, operatorNamespace) : undefined;
      if (names) {
        for (const namespace of names)
          byNamespace.set(namespace, [...(byNamespace.get(namespace) ?? []), { watches: [kind] }]);
      } else {
        watches.push(kind);
        watchNamespaces.push(scope);
      }
    });
    return { ...controller, watches, watchNamespaces };
  });
  return { clusterWide, byNamespace };
}

/** The namespaces a scope names; undefined for every namespace, or one known only at start-up. */
function namesOf(
  scope: WatchNamespaces | undefined,
  operatorNamespace: string | undefined,
): readonly string[] | undefined {
  if (scope === undefined) return undefined;
  if (typeof scope === 'string') return [scope];
  if (Array.isArray(scope)) return scope as readonly string[];
  if ('operatorNamespace' in scope) return operatorNamespace === undefined ? undefined : [operatorNamespace];
  return undefined;
}
