import type { Observable } from 'rxjs';
import { Subject } from '../rx.js';
import {
  type Clock,
  keyOf,
  type KubeObject,
  type ObjectRef,
  type ResourceDescriptor,
  resourceName,
  systemClock,
  type TimerHandle,
} from '@nestor/core';
import type { ResourceEvent } from './resource-event.js';
import { compareResourceVersions } from './resource-version.js';
import { Skeletons } from './skeleton.js';
import { StoreIndex, type IndexFunc } from './store-index.js';
import { watchInto } from '../watch/watch.js';
import type { WatchEvent } from '../watch/watch-event.js';
import type { WatchOptions, WatchTransport } from '../watch/watch-options.js';
import { createWatchStats, type WatchStats } from '../watch/watch-stats.js';

/** A change to the informer's store, emitted after the store holds it. `old` is set for updates. */
export type InformerEvent<T> = ResourceEvent<T>;

/** Built-in index: objects by namespace. */
export const NAMESPACE_INDEX = 'namespace';
/** Built-in index: objects by the UID of their controller owner reference. */
export const OWNER_INDEX = 'owner';

export interface InformerOptions extends Omit<WatchOptions, 'stats' | 'keep' | 'replaceKept'> {
  /** Re-emit every cached object as 'updated' (old === object) this often (default: never). */
  resyncMs?: number;
  /**
   * Keep a skeleton of each object (Skeletons: name, namespace, resourceVersion, generation,
   * labels, owner references) rather than the object: the events are the same, whole objects, and
   * an update's old object, a resync's deletion, `get` and `list` give skeletons. For a kind
   * whose events only map to requests; `keepObjects()` makes it keep whole objects.
   */
  eventsOnly?: boolean;
}

/** What an informer keeps of each object: the objects, their metadata (metadataOnly), or a skeleton (eventsOnly). */
export type InformerMode = 'objects' | 'metadata' | 'events';

const none: readonly string[] = [];
const byNamespace: IndexFunc<KubeObject> = (o) => (o.metadata?.namespace ? [o.metadata.namespace] : none);
const byOwner: IndexFunc<KubeObject> = (o) => {
  const owner = o.metadata?.ownerReferences?.find((ref) => ref.controller);
  return owner ? [owner.uid] : none;
};

/** One waiting on the informer: settled once, then out of its set. */
interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/** An index and its function; the index is built on first use. */
interface IndexEntry {
  readonly fn: IndexFunc<KubeObject>;
  index?: StoreIndex<KubeObject>;
}

/**
 * A cache of one resource and selector fed by one watch: a store keyed by `ns/name`,
 * indexes built on first use and kept up to date on every event after, a `synced` signal after the first full list,
 * and the changes as a hot Observable. The cached objects are the decoded objects
 * themselves: treat them as read-only. With `eventsOnly` it keeps a skeleton of each object
 * (see Skeletons) until keepObjects().
 */
export class Informer<T extends KubeObject = KubeObject> {
  /** Health of the underlying watch. */
  readonly stats: WatchStats = createWatchStats();
  /** Changes after they are in the store; hot and shared (no replay: read list() first). */
  readonly events$: Observable<InformerEvent<T>>;
  /** Written by the watch only (watchInto): one entry and one key per object. */
  private readonly store = new Map<string, T>();
  // The index and the subject are typed over KubeObject so that Informer<T> is covariant
  // in T: an Informer<Pod> can be used as an Informer<KubeObject>.
  private readonly indexes = new Map<string, IndexEntry>();
  /** The built indexes, the ones each event updates. */
  private readonly built: StoreIndex<KubeObject>[] = [];
  private readonly changes = new Subject<InformerEvent<KubeObject>>();
  private readonly clock: Clock;
  private readonly waiters = new Set<Waiter>();
  /** Waiting for the watch to reach a resourceVersion (whenReached): checked as it moves. */
  private readonly catchUps = new Set<Waiter & { resourceVersion: string }>();
  private stopWatch?: () => void;
  private resyncTimer?: TimerHandle;
  private state: 'new' | 'running' | 'stopped' = 'new';
  private hasSynced = false;
  /** False while the store holds skeletons (eventsOnly), until keepObjects() has filled it. */
  private keepsObjects: boolean;
  /** keepObjects() is underway: a new watch is replacing the skeletons. */
  private fillingNow = false;
  /** Waiting for keepObjects() to fill the store. */
  private readonly fills = new Set<Waiter>();

  constructor(
    private readonly transport: WatchTransport,
    readonly resource: ResourceDescriptor<T>,
    private readonly options: InformerOptions = {},
  ) {
    this.events$ = this.changes.asObservable() as Observable<InformerEvent<T>>;
    this.clock = options.clock ?? systemClock;
    this.keepsObjects = !options.eventsOnly;
    this.addIndex(NAMESPACE_INDEX, byNamespace);
    this.addIndex(OWNER_INDEX, byOwner);
  }

  /** True once the first complete list is in the store (and forever after). */
  get synced(): boolean {
    return this.hasSynced;
  }

  get size(): number {
    return this.store.size;
  }

  /**
   * keepObjects() is replacing the store's skeletons with whole objects: until it is done
   * (`whenSynced`), what the store holds is skeletons, and the fill emits nothing for objects
   * that did not change (replayThenFollow waits for it).
   */
  get filling(): boolean {
    return this.fillingNow;
  }

  /** What the store holds of each object: see InformerMode. 'events' until keepObjects() has filled it. */
  get mode(): InformerMode {
    if (!this.keepsObjects) return 'events';
    return this.options.metadataOnly ? 'metadata' : 'objects';
  }

  get(ref: string | ObjectRef): T | undefined {
    return this.store.get(typeof ref === 'string' ? ref : keyOf(ref));
  }

  /** The cached objects, in one namespace or all. */
  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.store.values()];
    // An informer of one namespace needs no index to answer (nor its memory: a set entry an object).
    const scope = this.resource.namespaced ? this.options.namespace : undefined;
    if (scope !== undefined) return namespace === scope ? [...this.store.values()] : [];
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  keys(): IterableIterator<string> {
    return this.store.keys();
  }

  /**
   * Adds an index. It is built over the store on its first use (byIndex, indexKeys) and
   * kept up to date from then on: an index nothing asks for costs no memory and no work.
   */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexes.has(name))
      throw new Error(`the informer for ${resourceName(this.resource)} already has an index named "${name}"`);
    this.indexes.set(name, { fn: fn as IndexFunc<KubeObject> });
  }

  /** The objects indexed under `value`; costs the size of the result. */
  byIndex(name: string, value: string): T[] {
    const objects: T[] = [];
    for (const key of this.index(name).keys(value)) objects.push(this.store.get(key)!);
    return objects;
  }

  /** The keys indexed under `value`. */
  indexKeys(name: string, value: string): string[] {
    return [...this.index(name).keys(value)];
  }

  /**
   * Resolves once synced and, while keepObjects() fills the store, once it is filled (`synced`
   * stays true meanwhile: the events go on); rejects when `signal` aborts or the informer
   * stops first.
   */
  whenSynced(signal?: AbortSignal): Promise<void> {
    if (!this.hasSynced) return this.wait(this.waiters, {}, signal);
    return this.fillingNow ? this.wait(this.fills, {}, signal) : Promise.resolve();
  }

  /**
   * The resourceVersion the watch stands at: its last event's, bookmark's or sync's, with
   * every change up to it in the store. Undefined before the first sync.
   */
  get resourceVersion(): string | undefined {
    return this.stats.resourceVersion;
  }

  /**
   * Whether the store holds every change of the resource up to `resourceVersion`: another
   * informer's event at it is no newer than what this one serves. True as well when the two
   * cannot be ordered (see compareResourceVersions): nothing to wait for then.
   */
  reached(resourceVersion: string): boolean {
    const at = this.stats.resourceVersion;
    if (at === undefined) return false;
    const order = compareResourceVersions(at, resourceVersion);
    return order === undefined || order >= 0;
  }

  /** Resolves once reached(resourceVersion); rejects when `signal` aborts or the informer stops first. */
  whenReached(resourceVersion: string, signal?: AbortSignal): Promise<void> {
    if (this.reached(resourceVersion)) return Promise.resolve();
    return this.wait(this.catchUps, { resourceVersion }, signal);
  }

  /** Starts the watch; once only. */
  start(): void {
    if (this.state === 'running') return;
    if (this.state === 'stopped') throw this.stoppedError();
    this.state = 'running';
    this.watch(false);
    if (this.options.resyncMs) this.scheduleResync(this.options.resyncMs);
  }

  /**
   * From now on, keep whole objects where the store kept skeletons (eventsOnly): the watch
   * starts over with a consistent LIST (not older than anything the skeletons' watch saw)
   * whose objects replace the skeletons, and which emits only what changed meanwhile, as any
   * relist; the store's keys, the events and `synced` go on throughout. Resolves once every
   * object is in; at once when the informer keeps objects already.
   */
  keepObjects(signal?: AbortSignal): Promise<void> {
    if (this.keepsObjects || this.fillingNow) return this.whenSynced(signal);
    if (this.state === 'stopped') return Promise.reject(this.stoppedError());
    if (this.state === 'new') {
      this.keepsObjects = true; // nothing kept yet: the first list brings whole objects
      return this.whenSynced(signal);
    }
    this.fillingNow = true;
    this.stopWatch?.();
    this.watch(true);
    return this.whenSynced(signal);
  }

  /** The list+watch into the store; `fill`: its first sync replaces the skeletons (keepObjects). */
  private watch(fill: boolean): void {
    const { eventsOnly: _, ...options } = this.options;
    const skeletons = !this.keepsObjects && !fill;
    this.stopWatch = watchInto(
      this.transport,
      this.resource,
      {
        ...options,
        stats: this.stats,
        ...(skeletons ? { keep: new Skeletons().of } : {}),
        ...(fill ? { replaceKept: true, firstListFromCache: false } : {}),
      },
      this.store,
      (event, key, old) => this.apply(event, key!, old),
      () => this.progressed(),
    );
  }

  /** Stops the watch for good; waiters on the sync are rejected. The store keeps its last state. */
  stop(): void {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.stopWatch?.();
    if (this.resyncTimer !== undefined) this.clock.clearTimeout(this.resyncTimer);
    for (const waiter of [...this.waiters, ...this.catchUps, ...this.fills]) waiter.reject(this.stoppedError());
    this.changes.complete();
  }

  /** An event the watch has already applied to the store; `old` is what it replaced or deleted. */
  private apply(event: WatchEvent<T>, key: string, old: T | undefined): void {
    if (event.type === 'SYNCED') {
      if (!this.hasSynced) {
        this.hasSynced = true;
        for (const waiter of [...this.waiters]) waiter.resolve();
      }
      if (this.fillingNow) this.filled();
      return;
    }
    if (this.state !== 'running') return;
    const object = event.object;
    if (event.type === 'DELETED') {
      if (old === undefined) return;
      for (const index of this.built) index.update(key, old, undefined);
      this.changes.next({ type: 'deleted', object });
      return;
    }
    for (const index of this.built) index.update(key, old, object);
    this.changes.next(old === undefined ? { type: 'added', object } : { type: 'updated', object, old });
  }

  /** keepObjects()'s list is in: the store holds whole objects, and the indexes built over skeletons are built again on use. */
  private filled(): void {
    this.fillingNow = false;
    this.keepsObjects = true;
    for (const entry of this.indexes.values()) entry.index = undefined;
    this.built.length = 0;
    for (const waiter of [...this.fills]) waiter.resolve();
  }

  /** The watch moved (an event, a bookmark, a sync): wakes those waiting for where it now stands. */
  private progressed(): void {
    if (this.catchUps.size === 0) return; // the common case: one check an event
    for (const waiter of [...this.catchUps]) if (this.reached(waiter.resourceVersion)) waiter.resolve();
  }

  /** A waiter in `waiters` until resolved, rejected (the informer stopped) or aborted by `signal`. */
  private wait<W extends object>(waiters: Set<Waiter & W>, fields: W, signal: AbortSignal | undefined): Promise<void> {
    if (this.state === 'stopped') return Promise.reject(this.stoppedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => settle(() => reject(signal!.reason));
      const waiter = {
        ...fields,
        resolve: () => settle(resolve),
        reject: (error: unknown) => settle(() => reject(error)),
      };
      const settle = (how: () => void) => {
        waiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
        how();
      };
      waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** As client-go's resync: every cached object again as an update, so controllers re-check it. */
  private scheduleResync(ms: number): void {
    // Up to 10 % later each time, so informers started together do not resync together.
    this.resyncTimer = this.clock.setTimeout(
      () => {
        if (this.state !== 'running') return;
        if (this.hasSynced)
          for (const object of this.store.values()) this.changes.next({ type: 'updated', object, old: object });
        this.scheduleResync(ms);
      },
      ms + Math.random() * ms * 0.1,
    );
  }

  private index(name: string): StoreIndex<KubeObject> {
    const entry = this.indexes.get(name);
    if (!entry) {
      const known = [...this.indexes.keys()].join(', ');
      throw new Error(
        `the informer for ${resourceName(this.resource)} has no index "${name}" (it has: ${known}); add it with addIndex()`,
      );
    }
    if (entry.index === undefined) {
      // Once, over what is there; every event keeps it up to date after.
      const index = new StoreIndex(entry.fn);
      for (const [key, object] of this.store) index.update(key, undefined, object);
      entry.index = index;
      this.built.push(index);
    }
    return entry.index;
  }

  private stoppedError(): Error {
    return new Error(`the informer for ${resourceName(this.resource)} was stopped`);
  }
}
