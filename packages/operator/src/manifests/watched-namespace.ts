import { resourceOf } from '../crd/custom-resource.decorator.js';
import type { ControllerAccess } from './rbac.js';

/**
 * The namespaces the controllers watch, when every one of them watches named namespaces;
 * undefined when any watches all of them. A controller watches its `namespaces` or
 * `namespace` option, else the module's; a `@Watches` its own, else the module's
 * (nest/controller-binding.ts). A controller of a cluster-scoped kind needs the cluster; a
 * `@Watches` of one is not counted. With named namespaces, the controllers' rules on
 * namespaced kinds fit a Role in each.
 */
export function watchedNamespaces(
  controllers: readonly ControllerAccess[],
  moduleNamespace: string | undefined,
): string[] | undefined {
  const namespaces = new Set<string>();
  /** False when `scope` is every namespace. */
  const add = (scope: string | readonly string[] | undefined): boolean => {
    if (scope === undefined) return false;
    for (const namespace of typeof scope === 'string' ? [scope] : scope) namespaces.add(namespace);
    return true;
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
