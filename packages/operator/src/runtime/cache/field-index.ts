import type { KubeObject } from '@nestor/core';
import type { IndexFunc } from './store-index.js';

/**
 * What a field index files an object under (controller-runtime's IndexField extractor,
 * kopf's `@kopf.index`): one value, several, or none. Called on every change of every
 * cached object of the kind: keep it pure and cheap (read a field, no I/O).
 */
export type FieldIndexer<T = KubeObject> = (object: T) => string | readonly string[] | undefined | null;

/** The store index that backs field index `name` (apart from the built-in ones). */
export function fieldIndexName(name: string): string {
  return `field:${name}`;
}

/** A store index function from an indexer: values as a list; an indexer that throws files the object nowhere. */
export function fieldIndexFunc<T>(indexer: FieldIndexer<T>, onError: (error: Error) => void): IndexFunc<T> {
  return (object) => {
    let values: ReturnType<FieldIndexer<T>>;
    try {
      values = indexer(object);
    } catch (error) {
      onError(error as Error);
      return [];
    }
    if (values === undefined || values === null) return [];
    return typeof values === 'string' ? [values] : values;
  };
}
