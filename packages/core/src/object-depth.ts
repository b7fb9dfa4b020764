import { MAX_OBJECT_DEPTH } from './defaults.js';

/** What is known of an object a decoder refused: enough to name it, and to find it in a cache. */
export interface RefusedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
}

/**
 * An object from the API server nested deeper than MAX_OBJECT_DEPTH. The decoders refuse
 * it alone: the stream or list it came in goes on, and the watch keeps its place.
 */
export class ObjectTooDeepError extends Error {
  override readonly name = 'ObjectTooDeepError';

  constructor(
    /** The refused object's kind, apiVersion and metadata (as far as they were read). */
    readonly object: RefusedObject,
    readonly limit = MAX_OBJECT_DEPTH,
  ) {
    super(
      `${describeObject(object)} nests objects and arrays more than ${limit} deep (MAX_OBJECT_DEPTH): ` +
        'refused, not decoded; flatten or delete it',
    );
  }
}

/** "ConfigMap default/name (resourceVersion 7)", from what is known. */
export function describeObject(object: RefusedObject): string {
  const meta = object.metadata;
  const name = meta?.name ? (meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name) : '(no name)';
  const version = meta?.resourceVersion ? ` (resourceVersion ${meta.resourceVersion})` : '';
  return `${object.kind ?? 'an object'} ${name}${version}`;
}

/** The kind, apiVersion and metadata of a decoded (or partly decoded) object, for an error. */
export function refusedObject(value: unknown): RefusedObject {
  if (value === null || typeof value !== 'object') return {};
  const { apiVersion, kind, metadata } = value as Record<string, unknown>;
  const meta = metadata !== null && typeof metadata === 'object' ? (metadata as Record<string, unknown>) : undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    ...(typeof apiVersion === 'string' ? { apiVersion } : {}),
    ...(typeof kind === 'string' ? { kind } : {}),
    ...(meta
      ? {
          metadata: {
            ...(text(meta.name) !== undefined ? { name: text(meta.name) } : {}),
            ...(text(meta.namespace) !== undefined ? { namespace: text(meta.namespace) } : {}),
            ...(text(meta.resourceVersion) !== undefined ? { resourceVersion: text(meta.resourceVersion) } : {}),
            ...(text(meta.uid) !== undefined ? { uid: text(meta.uid) } : {}),
          },
        }
      : {}),
  };
}
