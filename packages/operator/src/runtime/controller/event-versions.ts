import {
  DEFAULT_CACHE_CATCH_UP_MS,
  systemClock,
  type Clock,
  type KubeObject,
  type ResourceDescriptor,
} from '@nestor/core';
import type { Informer } from '../cache/informer.js';
import { compareResourceVersions } from '../cache/resource-version.js';

// Issue 44. Two informers of one kind (every namespace's and one namespace's, for two
// controllers or a `watches` entry) are two watches, each at its own resourceVersion: a
// reconcile queued by an event of one could read an older object through the other, which
// the cache reads (`InformerCache.find`) prefer. Serving a namespace's watch from the
// informer of every namespace (one informer per kind, as controller-runtime) would close it
// only when that informer comes first: one acquired after the namespace's (whose handles
// are held and subscribed), a label-selected or metadata-only watch, still make two. So the
// rule is the reads': before a reconcile runs, every informer that may serve its reads of
// the event's kind and namespace has reached the event's resourceVersion, waited for with
// a bound. A label-selected or metadata-only informer is never waited for: no read is served
// from it, and its selection may never bring it to that resourceVersion.
// Cost: per event, one map entry for its queued key (about 85 bytes while the key waits);
// per run, two map lookups, and a wait only when a reader is behind.

/**
 * An event that queued a key: the informer it came from, its object's namespace, the newest
 * resourceVersion, and the informers that serve reads of that kind where it is (another
 * cluster's cache for a member cluster's event; the controller's own when undefined).
 */
interface Origin {
  readonly informer: Informer<KubeObject>;
  readonly namespace: string | undefined;
  readonly readers?: ReadersOf;
  resourceVersion: string;
}

/** The informers that may serve reads of a kind in a namespace (`InformerCache.readersOf`). */
export type ReadersOf = (
  resource: ResourceDescriptor,
  namespace: string | undefined,
) => readonly Informer<KubeObject>[];

/** How the wait before a run ended: the run may go, or the key is retried (`behind` says why). */
export type CatchUp = { outcome: 'reached' } | { outcome: 'timeout'; behind: string } | { outcome: 'aborted' };

export interface EventVersionsOptions {
  readers: ReadersOf;
  /** Bound on one wait (default DEFAULT_CACHE_CATCH_UP_MS). */
  timeoutMs?: number;
  clock?: Clock;
}

/**
 * The resourceVersions of the events that queued each key, until its run takes them, and
 * the wait, bounded, for the informers that serve the run's reads to reach them.
 */
export class EventVersions {
  /** Per queued key: one origin (the common case), or several by informer and namespace. */
  private readonly byKey = new Map<string, Origin | Map<string, Origin>>();
  private readonly ids = new Map<Informer<KubeObject>, number>();
  private readonly timeoutMs: number;
  private readonly clock: Clock;

  constructor(private readonly options: EventVersionsOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CACHE_CATCH_UP_MS;
    this.clock = options.clock ?? systemClock;
  }

  /** Keys with events not yet taken by a run. */
  get size(): number {
    return this.byKey.size;
  }

  /** What the event sources of `informer` call with each key they queue (`QueuedBy`). */
  queuedBy(informer: Informer<KubeObject>): (key: string, object: KubeObject) => void {
    return (key, object) => this.note(key, informer, object);
  }

  /**
   * An event of `informer` about `object` queued `key`; `readers`: who serves reads of its
   * kind where the informer is, when not the controller's own cache (a member cluster's).
   */
  note(key: string, informer: Informer<KubeObject>, object: KubeObject, readers?: ReadersOf): void {
    const resourceVersion = object.metadata?.resourceVersion;
    if (!resourceVersion) return;
    this.add(key, {
      informer,
      namespace: object.metadata?.namespace,
      resourceVersion,
      ...(readers ? { readers } : {}),
    });
  }

  /**
   * Before `key` runs: its events' origins, taken, and the version of `object`, what the run
   * is given, read from `informer` before the wait (read after, an event during the wait
   * could hand the run an object newer than what was waited for; null: deleted, no run).
   * Undefined when every informer that may serve the run's reads has reached them (the run
   * goes at once); else a wait, bounded, which on a timeout or an abort keeps the origins
   * still behind for the next run.
   */
  catchUp(
    key: string,
    signal: AbortSignal,
    object?: KubeObject | null,
    informer?: Informer<KubeObject>,
  ): Promise<CatchUp> | undefined {
    const held = this.byKey.get(key);
    if (held !== undefined) this.byKey.delete(key);
    if (object === null) return undefined; // deleted: no run, nothing to wait for
    const behind: Array<{ origin: Origin; reader: Informer<KubeObject> }> = [];
    const check = (origin: Origin) => {
      for (const reader of (origin.readers ?? this.options.readers)(origin.informer.resource, origin.namespace)) {
        if (reader !== origin.informer && !reader.reached(origin.resourceVersion)) behind.push({ origin, reader });
      }
    };
    if (held instanceof Map) held.forEach(check);
    else if (held !== undefined) check(held);
    const given = object?.metadata?.resourceVersion;
    if (informer && given) check({ informer, namespace: object!.metadata!.namespace, resourceVersion: given });
    if (behind.length === 0) return undefined;
    return this.wait(key, behind, signal);
  }

  /** Forgets every key (the controller stopped). */
  clear(): void {
    this.byKey.clear();
    this.ids.clear();
  }

  private async wait(
    key: string,
    behind: Array<{ origin: Origin; reader: Informer<KubeObject> }>,
    signal: AbortSignal,
  ): Promise<CatchUp> {
    const bounded = new AbortController();
    const timer = this.clock.setTimeout(() => bounded.abort(new Error('timed out')), this.timeoutMs);
    const onAbort = () => bounded.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      // A reader stopped meanwhile (released) rejects: it serves no read any more.
      await Promise.allSettled(
        behind.map(({ origin, reader }) => reader.whenReached(origin.resourceVersion, bounded.signal)),
      );
    } finally {
      this.clock.clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
    if (!bounded.signal.aborted) return { outcome: 'reached' };
    const still = behind.filter(({ origin, reader }) => !reader.reached(origin.resourceVersion));
    if (still.length === 0) return { outcome: 'reached' };
    for (const { origin } of still) this.add(key, { ...origin });
    if (signal.aborted) return { outcome: 'aborted' };
    const { origin, reader } = still[0]!;
    const where = origin.namespace ? ` in ${origin.namespace}` : '';
    return {
      outcome: 'timeout',
      behind:
        `the cache of ${reader.resource.plural}${where} stands at resourceVersion ${reader.resourceVersion ?? '(none)'}, ` +
        `behind ${origin.resourceVersion} of the event that queued it, after ${this.timeoutMs} ms`,
    };
  }

  private add(key: string, origin: Origin): void {
    const held = this.byKey.get(key);
    if (held === undefined) return void this.byKey.set(key, origin);
    if (!(held instanceof Map)) {
      if (held.informer === origin.informer && held.namespace === origin.namespace) return newest(held, origin);
      this.byKey.set(key, new Map([[this.tagOf(held), held]]));
      return this.add(key, origin);
    }
    const tag = this.tagOf(origin);
    const known = held.get(tag);
    if (known) newest(known, origin);
    else held.set(tag, origin);
  }

  /** Informer and namespace as one map key: for a key queued from several of them (rare). */
  private tagOf(origin: Origin): string {
    let id = this.ids.get(origin.informer);
    if (id === undefined) this.ids.set(origin.informer, (id = this.ids.size));
    return `${id}/${origin.namespace ?? ''}`;
  }
}

/** Keeps the newer resourceVersion in `known` (the later one when they cannot be ordered). */
function newest(known: Origin, origin: Origin): void {
  if ((compareResourceVersions(origin.resourceVersion, known.resourceVersion) ?? 1) > 0) {
    known.resourceVersion = origin.resourceVersion;
  }
}
