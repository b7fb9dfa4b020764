import {
  apiVersionOf,
  KubeApiError,
  type KubeObject,
  type KubeStatus,
  type ObjectRef,
  type ObjectTooDeepError,
  type ResourceDescriptor,
  withoutManagedFields,
} from '@nestor/core';
import { StringPool } from './string-pool.js';

/** A watch event as the transport decodes it. */
export interface RawWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject;
  /** The protobuf decoder refused the object (too deep): `object` is its metadata only. */
  refused?: ObjectTooDeepError;
}

export interface WatchDecoderOptions {
  /** Delete metadata.managedFields (WatchOptions.stripManagedFields). */
  strip: boolean;
  /** The objects are PartialObjectMetadata standing for the resource's kind. */
  metadataOnly: boolean;
  transform?: (object: KubeObject) => KubeObject;
  /** What the store keeps of each decoded object (WatchOptions.keep). */
  keep?: (object: KubeObject) => KubeObject;
}

/** Turns what the server sent into what the cache holds, and under which key. */
export class WatchDecoder<T extends KubeObject> {
  readonly apiVersion: string;
  /** The repeated short strings of the objects, one copy each (with 100,000 objects, megabytes). */
  private readonly strings = new StringPool();
  /** The last namespace keyed, and its "namespace/" (see keyOf). */
  private keyNamespace?: string;
  private keyPrefix = '';

  constructor(
    private readonly resource: ResourceDescriptor<T>,
    private readonly path: string,
    private readonly options: WatchDecoderOptions,
  ) {
    this.apiVersion = apiVersionOf(resource);
  }

  /**
   * keyOf's `namespace/name`, built on one shared "namespace/" per namespace in a row: the
   * key then costs its own 32 bytes, not 32 more for a copy of that prefix.
   */
  keyOf(ref: ObjectRef): string {
    const namespace = ref.namespace;
    if (!namespace) return ref.name;
    if (namespace !== this.keyNamespace) {
      this.keyNamespace = namespace;
      this.keyPrefix = `${namespace}/`;
    }
    return this.keyPrefix + ref.name;
  }

  decode(raw: KubeObject): T {
    // Nothing else references a freshly parsed object: changing it in place is free.
    if (this.options.strip && raw.metadata?.managedFields) raw.metadata = withoutManagedFields(raw.metadata);
    if (this.options.metadataOnly) {
      // PartialObjectMetadata (meta.k8s.io/v1) stands for an object of this kind.
      raw.apiVersion = this.apiVersion;
      raw.kind = this.resource.kind;
    } else {
      // The watch's own copies, not one per event.
      if (raw.apiVersion === this.apiVersion) raw.apiVersion = this.apiVersion;
      if (raw.kind === this.resource.kind) raw.kind = this.resource.kind;
    }
    this.strings.internMetadata(raw);
    return (this.options.transform ? this.options.transform(raw) : raw) as T;
  }

  /** What the store keeps of a decoded object: the object itself, or what `keep` makes of it. */
  kept(object: T): T {
    return this.options.keep ? (this.options.keep(object) as T) : object;
  }

  /**
   * The Status of an ERROR event as the error it stands for. An object that is no Status (a
   * proxy's or a broken server's) is a 500 saying so, never a crash of the loop.
   */
  errorOf(raw: unknown): KubeApiError {
    const request = { method: 'GET', path: this.path, watch: true };
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      const status = raw as KubeStatus;
      if (status.kind === 'Status' || typeof status.code === 'number' || typeof status.message === 'string') {
        const code = typeof status.code === 'number' && status.code >= 400 ? status.code : 500;
        return KubeApiError.fromResponse(request, code, status);
      }
    }
    const what = raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw;
    return KubeApiError.fromResponse(request, 500, `an ERROR event whose object is not a Status (${what})`);
  }
}
