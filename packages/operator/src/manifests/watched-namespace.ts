import { resourceOf } from '../crd/custom-resource.decorator.js';
import type { ControllerAccess } from './rbac.js';

/**
 * The one namespace every controller watches, or undefined when any watches all of them or
 * they watch different ones. A controller watches its `namespace` option, else the
 * module's; a `@Watches` its own `namespace`, else the module's (nest/controller-binding.ts).
 * A controller of a cluster-scoped kind watches no namespace; a `@Watches` of one is not counted. With one namespace, the
 * controllers' rules on namespaced kinds fit a Role there.
 */
export function singleWatchedNamespace(
  controllers: readonly ControllerAccess[],
  moduleNamespace: string | undefined,
): string | undefined {
  const namespaces = new Set<string | undefined>();
  for (const controller of controllers) {
    if (controller.resource && !resourceOf(controller.resource).namespaced) return undefined;
    namespaces.add(controller.namespace ?? moduleNamespace);
    (controller.watches ?? []).forEach((watched, i) => {
      // A cluster-scoped kind is watched cluster-wide, whatever namespace is named; its rules go to the ClusterRole.
      if (resourceOf(watched).namespaced) namespaces.add(controller.watchNamespaces?.[i] ?? moduleNamespace);
    });
  }
  const [only, ...more] = namespaces;
  return more.length === 0 ? only : undefined;
}
