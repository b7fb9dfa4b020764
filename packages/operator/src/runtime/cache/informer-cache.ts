import { type KubeObject, type ResourceDescriptor, resourceName } from '@nestor/core';
import type { ObjectSelector } from '../../client/object-selector.js';
import { Informer, type InformerOptions } from './informer.js';
import type { WatchTransport } from '../watch/watch-options.js';

/** Which objects of a resource an informer holds. */
export interface InformerSelector extends ObjectSelector {
  /** Only the objects' metadata (PartialObjectMetadata): an informer of its own, never used for full reads. */
  metadataOnly?: boolean;
}

/** A hold on a shared informer; release it when done (once). */
export interface InformerHandle<T extends KubeObject = KubeObject> {
  readonly informer: Informer<T>;
  release(): void;
}

interface Entry {
  informer: Informer<KubeObject>;
  holders: number;
}

/**
 * The shared informers of one transport: one informer, hence one watch on the wire, per
 * resource and selector, however many controllers and clients hold it; reference
 * counted, stopped when the last holder releases it.
 */
export class InformerCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly transport: WatchTransport,
    /** Options for every informer made here (transform, stripManagedFields, logger, resyncMs, ...). */
    private readonly defaults: InformerOptions = {},
    /**
     * Options for the informers of one resource, by `resourceName()` (`plural.group`), over
     * the defaults: controller-runtime's cache ByObject.
     */
    private readonly byResource: ReadonlyMap<string, InformerOptions> = new Map(),
  ) {}

  /** The informer for the resource and selector, started on first use. */
  acquire<T>(resource: ResourceDescriptor<T>, selector: InformerSelector = {}): InformerHandle<T & KubeObject> {
    const key = cacheKey(resource, selector);
    let entry = this.entries.get(key);
    if (!entry) {
      const informer = new Informer<KubeObject>(this.transport, resource as ResourceDescriptor<KubeObject>, {
        ...this.defaults,
        ...this.byResource.get(resourceName(resource)),
        ...scoped(resource, selector),
      });
      entry = { informer, holders: 0 };
      this.entries.set(key, entry);
      informer.start();
    }
    entry.holders++;
    const held = entry;
    let released = false;
    return {
      informer: held.informer as unknown as Informer<T & KubeObject>,
      release: () => {
        if (released) return;
        released = true;
        if (--held.holders > 0 || this.entries.get(key) !== held) return;
        this.entries.delete(key);
        held.informer.stop();
      },
    };
  }

  /**
   * A synced informer without label or field selector whose objects include the
   * namespace's (all namespaces, or exactly that one), for cache reads; undefined if none.
   */
  find<T>(resource: ResourceDescriptor<T>, namespace?: string): Informer<T & KubeObject> | undefined {
    const candidates = [cacheKey(resource, {}), ...(namespace ? [cacheKey(resource, { namespace })] : [])];
    for (const key of candidates) {
      const informer = this.entries.get(key)?.informer;
      if (informer?.synced) return informer as unknown as Informer<T & KubeObject>;
    }
    return undefined;
  }

  /** The running informers. */
  all(): Informer<KubeObject>[] {
    return [...this.entries.values()].map((entry) => entry.informer);
  }

  /** Stops every informer; handles still out become no-ops. */
  stopAll(): void {
    for (const entry of this.entries.values()) entry.informer.stop();
    this.entries.clear();
  }
}

/** The selector as it applies: a cluster-scoped resource has no namespace. */
function scoped(resource: ResourceDescriptor, selector: InformerSelector): InformerSelector {
  const { namespace, labelSelector, fieldSelector, metadataOnly } = selector;
  return {
    ...(namespace && resource.namespaced ? { namespace } : {}),
    ...(labelSelector ? { labelSelector } : {}),
    ...(fieldSelector ? { fieldSelector } : {}),
    ...(metadataOnly ? { metadataOnly } : {}),
  };
}

function cacheKey(resource: ResourceDescriptor, selector: InformerSelector): string {
  const { namespace = '', labelSelector = '', fieldSelector = '', metadataOnly } = scoped(resource, selector);
  const what = metadataOnly ? 'metadata' : 'objects';
  return `${resource.group}/${resource.version}/${resource.plural}\n${namespace}\n${labelSelector}\n${fieldSelector}\n${what}`;
}
