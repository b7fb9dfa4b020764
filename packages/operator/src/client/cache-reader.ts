import type { ResourceDescriptor } from '@nestor/core';

/**
 * Where reads may be served from instead of the API server: the runtime's InformerCache
 * is one. The client depends on this shape only, so it sits below the runtime.
 */
export interface CacheReader {
  /** A synced store that holds every object of the kind in the namespace (all namespaces without one). */
  find<T>(resource: ResourceDescriptor<T>, namespace?: string): CachedObjects<T> | undefined;
  /**
   * When `find` has none but the cache may start keeping the kind (it watches it for events
   * only): that store once it holds every object, which this first read starts. Undefined:
   * the read goes to the API server.
   */
  whenReadable?<T>(
    resource: ResourceDescriptor<T>,
    namespace?: string,
    signal?: AbortSignal,
  ): Promise<CachedObjects<T>> | undefined;
  /** The cached objects field index `name` files under `value`; undefined when the kind is not cached there. */
  byField?<T>(resource: ResourceDescriptor<T>, name: string, value: string, namespace?: string): T[] | undefined;
}

/** A cache's objects of one kind, read as they are (treat them as read-only). */
export interface CachedObjects<T> {
  get(key: string): T | undefined;
  list(namespace?: string): T[];
}
