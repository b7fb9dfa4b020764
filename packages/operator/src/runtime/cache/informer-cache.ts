import { keyOf, type KubeObject, refOfObject, type ResourceDescriptor, resourceName } from '@nestor/core';
import type { ObjectSelector } from '../../client/object-selector.js';
import { fieldIndexFunc, fieldIndexName, type FieldIndexer } from './field-index.js';
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
  selector: InformerSelector;
}

/**
 * The shared informers of one transport: one informer, hence one watch on the wire, per
 * resource and selector, however many controllers and clients hold it; reference
 * counted, stopped when the last holder releases it.
 */
export class InformerCache {
  private readonly entries = new Map<string, Entry>();
  /**
   * The informers reads may be served from (full objects, no label or field selector), by
   * kind then namespace ('' for all): the reads and the check before each reconcile
   * (readersOf) look them up without building a cache key.
   */
  private readonly readable = new Map<string, Map<string, Informer<KubeObject>>>();
  /** Each resource descriptor's kind key, made once. */
  private readonly kindKeys = new WeakMap<ResourceDescriptor, string>();
  /** Field indexes by kind key, then name: every informer of the kind has each. */
  private readonly fieldIndexes = new Map<string, Map<string, FieldIndexer<KubeObject>>>();
  /** The entries of each kind (kind key), for the field indexes. */
  private readonly byKind = new Map<string, Set<Entry>>();

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
      entry = { informer, holders: 0, selector };
      this.entries.set(key, entry);
      const kind = this.kindKey(resource);
      let ofKind = this.byKind.get(kind);
      if (!ofKind) this.byKind.set(kind, (ofKind = new Set()));
      ofKind.add(entry);
      for (const [name, indexer] of this.fieldIndexes.get(kind) ?? []) this.addFieldIndex(informer, name, indexer);
      const where = readableIn(resource, selector);
      if (where !== undefined) this.readersByNamespace(resource, true).set(where, informer);
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
        this.byKind.get(this.kindKey(resource))?.delete(held);
        const where = readableIn(resource, selector);
        if (where !== undefined) this.readersByNamespace(resource)?.delete(where);
        held.informer.stop();
      },
    };
  }

  /**
   * A synced informer without label or field selector whose objects include the
   * namespace's (all namespaces, or exactly that one), for cache reads; undefined if none.
   */
  find<T>(resource: ResourceDescriptor<T>, namespace?: string): Informer<T & KubeObject> | undefined {
    const readers = this.readersByNamespace(resource);
    const all = readers?.get('');
    if (all?.synced) return all as unknown as Informer<T & KubeObject>;
    const one = namespace && resource.namespaced ? readers?.get(namespace) : undefined;
    return one?.synced ? (one as unknown as Informer<T & KubeObject>) : undefined;
  }

  /**
   * Every informer `find` may serve a read of the namespace's objects from, the one it
   * serves from first: a second informer of the kind can answer tomorrow's read, and each is
   * a watch of its own, at its own resourceVersion.
   */
  readersOf<T>(resource: ResourceDescriptor<T>, namespace?: string): Informer<T & KubeObject>[] {
    const readers = this.readersByNamespace(resource);
    if (!readers) return [];
    const found: Informer<T & KubeObject>[] = [];
    const all = readers.get('');
    if (all?.synced) found.push(all as unknown as Informer<T & KubeObject>);
    const one = namespace && resource.namespaced ? readers.get(namespace) : undefined;
    if (one?.synced) found.push(one as unknown as Informer<T & KubeObject>);
    return found;
  }

  /**
   * Declares field index `name` on the kind (controller-runtime's IndexField): every informer
   * of the kind, now and later, files each object under the values `indexer` gives, and
   * `byField` (the client's `list(kind, { index })`) reads it. Declaring the same indexer
   * again is a no-op; another one under the same name is refused.
   */
  indexField<T>(resource: ResourceDescriptor<T>, name: string, indexer: FieldIndexer<T>): void {
    if (!name) throw new Error(`a field index of ${resourceName(resource)} needs a name`);
    const kind = this.kindKey(resource);
    let indexes = this.fieldIndexes.get(kind);
    const known = indexes?.get(name);
    if (known === indexer) return;
    if (known) {
      throw new Error(
        `${resourceName(resource)} has a field index named "${name}" already, from another function: give this one another name`,
      );
    }
    if (!indexes) this.fieldIndexes.set(kind, (indexes = new Map()));
    indexes.set(name, indexer as FieldIndexer<KubeObject>);
    for (const { informer } of this.entries.values()) {
      if (this.kindKey(informer.resource) === kind)
        this.addFieldIndex(informer, name, indexer as FieldIndexer<KubeObject>);
    }
  }

  /**
   * The cached objects of the kind filed under `value` in field index `name`, in the
   * namespace (all without one), from every synced informer of the kind that holds whole
   * objects there, selectors included: an index is declared by the controller that watches
   * the kind, and answers with what it watches. Undefined when no such informer holds the
   * namespace's objects. Throws when the kind has no such index.
   */
  byField<T>(resource: ResourceDescriptor<T>, name: string, value: string, namespace?: string): T[] | undefined {
    const kind = this.kindKey(resource);
    if (!this.fieldIndexes.get(kind)?.has(name)) {
      const declared = [...(this.fieldIndexes.get(kind)?.keys() ?? [])].map((n) => `"${n}"`);
      throw new Error(
        `${resourceName(resource)} has no field index named "${name}" (${declared.length ? `it has ${declared.join(', ')}` : 'it has none'}): ` +
          'declare it with `indexes` on a controller of the kind, or informers.indexField()',
      );
    }
    const scoped = namespace !== undefined && resource.namespaced;
    let found: KubeObject[] | undefined;
    let seen: Set<string> | undefined;
    for (const { informer, selector } of this.byKind.get(kind) ?? []) {
      if (!informer.synced || selector.metadataOnly) continue;
      if (scoped && selector.namespace !== undefined && selector.namespace !== namespace) continue;
      const filed = informer.byIndex(fieldIndexName(name), value);
      if (!found) {
        found = filed;
        continue;
      }
      // Another informer of the kind (another namespace or selector): each object once.
      seen ??= new Set(found.map(keyOfObject));
      for (const object of filed) {
        const key = keyOfObject(object);
        if (seen.has(key)) continue;
        seen.add(key);
        found.push(object);
      }
    }
    if (!found) return undefined;
    return (scoped ? found.filter((object) => object.metadata?.namespace === namespace) : found) as T[];
  }

  /** The running informers. */
  all(): Informer<KubeObject>[] {
    return [...this.entries.values()].map((entry) => entry.informer);
  }

  /** Stops every informer; handles still out become no-ops. */
  stopAll(): void {
    for (const entry of this.entries.values()) entry.informer.stop();
    this.entries.clear();
    this.readable.clear();
  }

  private addFieldIndex(informer: Informer<KubeObject>, name: string, indexer: FieldIndexer<KubeObject>): void {
    const kind = resourceName(informer.resource);
    informer.addIndex(
      fieldIndexName(name),
      fieldIndexFunc(indexer, (error) =>
        this.defaults.logger?.warn(`field index "${name}" of ${kind} failed on an object: ${error.message}`),
      ),
    );
  }

  private kindKey(resource: ResourceDescriptor): string {
    let kind = this.kindKeys.get(resource);
    if (kind === undefined) {
      kind = `${resource.group}/${resource.version}/${resource.plural}`;
      this.kindKeys.set(resource, kind);
    }
    return kind;
  }

  private readersByNamespace(resource: ResourceDescriptor, create: true): Map<string, Informer<KubeObject>>;
  private readersByNamespace(resource: ResourceDescriptor): Map<string, Informer<KubeObject>> | undefined;
  private readersByNamespace(resource: ResourceDescriptor, create = false) {
    const kind = this.kindKey(resource);
    let readers = this.readable.get(kind);
    if (!readers && create) this.readable.set(kind, (readers = new Map()));
    return readers;
  }
}

/**
 * Where an informer of this selector serves reads ('' for every namespace); undefined when
 * it holds part of the objects (a selector) or their metadata only.
 */
function readableIn(resource: ResourceDescriptor, selector: InformerSelector): string | undefined {
  const { namespace, labelSelector, fieldSelector, metadataOnly } = scoped(resource, selector);
  return labelSelector || fieldSelector || metadataOnly ? undefined : (namespace ?? '');
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

function keyOfObject(object: KubeObject): string {
  return keyOf(refOfObject(object));
}
