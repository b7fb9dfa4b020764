import {
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  keyOf,
  type KubeObject,
  refOfObject,
  type ResourceDescriptor,
  resourceName,
} from '@nestor/core';
import type { ObjectSelector } from '../../client/object-selector.js';
import { fieldIndexFunc, fieldIndexName, type FieldIndexer } from './field-index.js';
import { Informer, type InformerMode, type InformerOptions } from './informer.js';
import type { KeepChoice } from './keep-choice.js';
import type { WatchTransport } from '../watch/watch-options.js';

/** Which objects of a resource an informer holds, and what it keeps of them. */
export interface InformerSelector extends ObjectSelector {
  /** Only the objects' metadata (PartialObjectMetadata): an informer of its own, never used for full reads. */
  metadataOnly?: boolean;
  /**
   * A skeleton per object is enough for this holder (it maps events, it reads nothing): the
   * informer keeps skeletons unless a holder wants more (see Informer's eventsOnly). Not a
   * separate informer: one that keeps more serves it as well.
   */
  eventsOnly?: boolean;
  /**
   * With eventsOnly: the first read of the kind from this cache (`whenReadable`) makes the
   * informer keep whole objects, so reads are served from it as from any other.
   */
  cacheOnRead?: boolean;
}

/** What owned and watched kinds' informers keep (see KeepChoice): for every kind, and per kind by `resourceName()`. */
export interface KeepSettings {
  all?: KeepChoice;
  byResource?: ReadonlyMap<string, KeepChoice>;
}

/** What an InformerCache is built with (`settings`): options of every informer, per resource, and what owned and watched kinds keep. */
export interface InformerCacheSettings {
  defaults?: InformerOptions;
  byResource?: ReadonlyMap<string, InformerOptions>;
  keeps?: KeepSettings;
}

/** A hold on a shared informer; release it when done (once). */
export interface InformerHandle<T extends KubeObject = KubeObject> {
  readonly informer: Informer<T>;
  release(): void;
}

interface Entry {
  readonly key: string;
  informer: Informer<KubeObject>;
  holders: number;
  readonly selector: InformerSelector;
  /** Where it serves reads once it keeps objects ('' for every namespace); undefined: never. */
  readonly where: string | undefined;
  /** A holder asked for cacheOnRead: a read may make it keep objects. */
  cacheOnRead: boolean;
  /** keepObjects() asked of it by this cache. */
  filling: boolean;
  /** '<kind> in <namespace>', for the log. */
  readonly description: string;
}

/**
 * The shared informers of one transport: one informer, hence one watch on the wire, per
 * resource and selector, however many controllers and clients hold it; reference
 * counted, stopped when the last holder releases it. An informer whose holders only map
 * events keeps a skeleton per object, until a holder wants the objects or a read asks for
 * them (`whenReadable`): then it keeps them, in place, without a second watch.
 */
export class InformerCache {
  private readonly entries = new Map<string, Entry>();
  /**
   * The informers reads may be served from (full objects, no label or field selector), by
   * kind then namespace ('' for all): the reads and the check before each reconcile
   * (readersOf) look them up without building a cache key.
   */
  private readonly readable = new Map<string, Map<string, Informer<KubeObject>>>();
  /** Informers that keep skeletons and that a read may make keep objects (cacheOnRead), the same way. */
  private readonly lazy = new Map<string, Map<string, Entry>>();
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
    /** What owned and watched kinds keep when their controller does not say (see KeepChoice). */
    private readonly keeps: KeepSettings = {},
  ) {}

  /**
   * What this cache was built with, but its logger: a member cluster's cache is built with
   * the same (Fleet), so that its kinds are kept, transformed and resynced as here.
   */
  get settings(): InformerCacheSettings {
    const { logger: _, ...defaults } = this.defaults;
    return { defaults, byResource: this.byResource, keeps: this.keeps };
  }

  /** What the settings say an owned or watched kind's informers keep; undefined: the default rules. */
  keepOf(resource: ResourceDescriptor): KeepChoice | undefined {
    return this.keeps.byResource?.get(resourceName(resource)) ?? this.keeps.all;
  }

  /** The informer for the resource and selector, started on first use. */
  acquire<T>(resource: ResourceDescriptor<T>, selector: InformerSelector = {}): InformerHandle<T & KubeObject> {
    const key = cacheKey(resource, selector);
    let entry = this.entries.get(key);
    if (!entry) {
      const informer = new Informer<KubeObject>(this.transport, resource as ResourceDescriptor<KubeObject>, {
        ...this.defaults,
        ...this.byResource.get(resourceName(resource)),
        ...scoped(resource, selector),
        ...(selector.eventsOnly ? { eventsOnly: true } : {}),
      });
      entry = {
        key,
        informer,
        holders: 0,
        selector,
        where: readableIn(resource, selector),
        cacheOnRead: false,
        filling: false,
        description: describe(resource, selector),
      };
      this.entries.set(key, entry);
      const kind = this.kindKey(resource);
      let ofKind = this.byKind.get(kind);
      if (!ofKind) this.byKind.set(kind, (ofKind = new Set()));
      ofKind.add(entry);
      for (const [name, indexer] of this.fieldIndexes.get(kind) ?? []) this.addFieldIndex(informer, name, indexer);
      if (informer.mode === 'objects' && entry.where !== undefined)
        this.readersByNamespace(resource, true).set(entry.where, informer);
      this.log(entry, informer.mode === 'events' ? 'watched for events only: a skeleton per object' : undefined);
      informer.start();
    }
    if (!selector.eventsOnly && entry.informer.mode === 'events') this.startFill(entry, 'a holder wants its objects');
    else if (entry.informer.mode === 'events' && this.fieldIndexes.has(this.kindKey(resource)))
      this.startFill(entry, 'a field index of its kind reads its objects');
    else if (selector.cacheOnRead && !entry.cacheOnRead && entry.informer.mode === 'events') {
      entry.cacheOnRead = true;
      if (entry.where !== undefined) this.byNamespace(this.lazy, resource, true).set(entry.where, entry);
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
        this.forget(resource, held);
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
   * When no informer serves reads of the namespace's objects (`find`) but one keeps
   * skeletons of them and may keep them whole (cacheOnRead): that informer once it keeps
   * them, which the first such read starts (`Informer.keepObjects`: its watch starts over,
   * no second one). Undefined when there is none: the read goes to the API server. Rejects
   * when `signal` aborts, or after `DEFAULT_CACHE_SYNC_TIMEOUT_MS` with an error that says so.
   */
  whenReadable<T>(
    resource: ResourceDescriptor<T>,
    namespace?: string,
    signal?: AbortSignal,
  ): Promise<Informer<T & KubeObject>> | undefined {
    const lazy = this.byNamespace(this.lazy, resource);
    const entry = lazy?.get('') ?? (namespace && resource.namespaced ? lazy?.get(namespace) : undefined);
    if (!entry) return undefined;
    return this.fill(entry, 'read from the cache', signal).then(
      () => entry.informer as unknown as Informer<T & KubeObject>,
    );
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
    // An index computed over skeletons would file them by fields they do not keep: the kind's
    // informers keep objects from now on (its reads by index wait for them: `whenSynced`).
    for (const entry of this.byKind.get(kind) ?? []) {
      this.addFieldIndex(entry.informer, name, indexer as FieldIndexer<KubeObject>);
      if (entry.informer.mode === 'events') this.startFill(entry, 'a field index of its kind reads its objects');
    }
  }

  /**
   * The cached objects of the kind filed under `value` in field index `name`, in the
   * namespace (all without one), from every synced informer of the kind that holds whole
   * objects there, selectors included: an index is declared by the controller that watches
   * the kind, and answers with what it watches (one that keeps skeletons is filling, and
   * skipped until it is done). Undefined when no such informer holds the
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
      if (!informer.synced || informer.mode !== 'objects') continue; // metadata, or skeletons until filled
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
    this.lazy.clear();
    this.byKind.clear();
  }

  /** Makes the entry's informer keep objects (once), then serve reads. */
  private startFill(entry: Entry, why: string): void {
    if (entry.filling) return;
    entry.filling = true;
    this.log(entry, `${why}: keeping its objects from now on`);
    entry.informer.keepObjects().then(
      () => this.serveReads(entry),
      () => {}, // stopped first: released meanwhile
    );
  }

  /** startFill, and the wait for it, bounded. */
  private async fill(entry: Entry, why: string, signal?: AbortSignal): Promise<void> {
    const { informer } = entry;
    this.startFill(entry, why);
    const bound = AbortSignal.timeout(DEFAULT_CACHE_SYNC_TIMEOUT_MS);
    try {
      await informer.keepObjects(signal ? AbortSignal.any([signal, bound]) : bound);
    } catch (error) {
      if (!bound.aborted || signal?.aborted) throw error;
      throw new Error(
        `the cache of ${entry.description} did not fill within ${DEFAULT_CACHE_SYNC_TIMEOUT_MS} ms` +
          `${informer.stats.lastError ? `: ${informer.stats.lastError}` : ''}`,
        { cause: error },
      );
    }
  }

  /** The entry's informer keeps objects now: reads are served from it. */
  private serveReads(entry: Entry): void {
    const { informer, where } = entry;
    if (this.entries.get(entry.key) !== entry || where === undefined) return;
    this.byNamespace(this.lazy, informer.resource)?.delete(where);
    this.readersByNamespace(informer.resource, true).set(where, informer);
    this.log(entry, 'keeps its objects: reads are served from it');
  }

  /** Drops a released entry from the indexes of reads. */
  private forget(resource: ResourceDescriptor, entry: Entry): void {
    if (entry.where === undefined) return;
    const readers = this.readersByNamespace(resource);
    if (readers?.get(entry.where) === entry.informer) readers.delete(entry.where);
    const lazy = this.byNamespace(this.lazy, resource);
    if (lazy?.get(entry.where) === entry) lazy.delete(entry.where);
  }

  private log(entry: Entry, what: string | undefined): void {
    const mode: InformerMode = entry.informer.mode;
    this.defaults.logger?.debug(
      `informer ${entry.description}: ${what ?? (mode === 'objects' ? 'caches its objects' : 'caches their metadata')}`,
      { resource: resourceName(entry.informer.resource), mode },
    );
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
    return create ? this.byNamespace(this.readable, resource, true) : this.byNamespace(this.readable, resource);
  }

  /** The kind's map, by namespace, in `index` (readable or lazy). */
  private byNamespace<V>(
    index: Map<string, Map<string, V>>,
    resource: ResourceDescriptor,
    create: true,
  ): Map<string, V>;
  private byNamespace<V>(index: Map<string, Map<string, V>>, resource: ResourceDescriptor): Map<string, V> | undefined;
  private byNamespace<V>(index: Map<string, Map<string, V>>, resource: ResourceDescriptor, create = false) {
    const kind = this.kindKey(resource);
    let map = index.get(kind);
    if (!map && create) index.set(kind, (map = new Map()));
    return map;
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

/** 'configmaps in ns' and the selector, for the log. */
function describe(resource: ResourceDescriptor, selector: InformerSelector): string {
  const { namespace, labelSelector, fieldSelector, metadataOnly } = scoped(resource, selector);
  return [
    resourceName(resource),
    namespace ? `in ${namespace}` : '',
    labelSelector ? `labels ${labelSelector}` : '',
    fieldSelector ? `fields ${fieldSelector}` : '',
    metadataOnly ? '(metadata only)' : '',
  ]
    .filter(Boolean)
    .join(' ');
}

function cacheKey(resource: ResourceDescriptor, selector: InformerSelector): string {
  const { namespace = '', labelSelector = '', fieldSelector = '', metadataOnly } = scoped(resource, selector);
  const what = metadataOnly ? 'metadata' : 'objects';
  return `${resource.group}/${resource.version}/${resource.plural}\n${namespace}\n${labelSelector}\n${fieldSelector}\n${what}`;
}

function keyOfObject(object: KubeObject): string {
  return keyOf(refOfObject(object));
}
