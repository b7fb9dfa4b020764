import type { KubeObject, ResourceDescriptor } from '@nestor/core';
import { builtinKinds } from './kinds.js';

/**
 * Maps apiVersion + kind to a resource descriptor, so `kube.apply(object)` finds the REST
 * path of any object it is given. Built-in kinds are known; custom resources register here
 * when their class is decorated or their controller is registered.
 */
export class KindRegistry {
  private readonly byGvk = new Map<string, ResourceDescriptor>();

  constructor(kinds: readonly ResourceDescriptor[] = builtinKinds) {
    for (const kind of kinds) this.register(kind);
  }

  register(resource: ResourceDescriptor): void {
    this.byGvk.set(
      gvk(resource.group ? `${resource.group}/${resource.version}` : resource.version, resource.kind),
      resource,
    );
  }

  /** The descriptor of an object, from its apiVersion and kind. */
  forObject(object: KubeObject): ResourceDescriptor {
    const { apiVersion, kind } = object;
    if (!apiVersion || !kind) {
      throw new Error(
        `the object ${object.metadata?.name ?? '(unnamed)'} has no ${apiVersion ? 'kind' : 'apiVersion'}: set apiVersion and kind, or pass its resource descriptor`,
      );
    }
    const resource = this.byGvk.get(gvk(apiVersion, kind));
    if (!resource) {
      throw new Error(
        `unknown kind ${kind} in ${apiVersion}: register its descriptor (a @CustomResource class, or KindRegistry.register) or pass the resource explicitly`,
      );
    }
    return resource;
  }
}

function gvk(apiVersion: string, kind: string): string {
  return `${apiVersion}/${kind}`;
}
