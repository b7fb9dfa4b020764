/**
 * Identifies a kind on the API server: what the REST paths are built from. Built-in kinds
 * and custom resources are both described by one; `T` is the object type it yields.
 */
export interface ResourceDescriptor<T = unknown> {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural used in REST paths, e.g. 'deployments'. */
  readonly plural: string;
  readonly namespaced: boolean;
  /** Phantom field that carries the object type; never set at run time. */
  readonly __type?: T;
}

/** `apps/v1`, or `v1` for the core group. */
export function apiVersionOf(resource: ResourceDescriptor): string {
  return resource.group ? `${resource.group}/${resource.version}` : resource.version;
}

/**
 * REST path of a collection or object: /api/v1/namespaces/ns/configmaps[/name]. Without a
 * namespace a namespaced resource's path spans all namespaces.
 */
export function resourcePath(resource: ResourceDescriptor, namespace?: string, name?: string): string {
  const base = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
  const ns = resource.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${resource.plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
}

/** A short readable name for messages and metrics: 'deployments.apps', 'configmaps'. */
export function resourceName(resource: ResourceDescriptor): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
}
