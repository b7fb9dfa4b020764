import { keyOf, refOfObject, type KubeObject, type ObjectRef, type ResourceDescriptor } from '@nestor/core';
import type { Observable, ObservableInput } from 'rxjs';
import * as rx from '../rx.js';
import { Backoff } from '../backoff.js';
import type { Informer } from '../cache/informer.js';
import type { Predicate, ResourceEvent } from './predicates.js';
import { toError } from './result.js';
import type { ObjectSelector } from '../../client/object-selector.js';
import type { ClusterSelection } from './cluster-selection.js';
import type { KeepChoice } from '../cache/keep-choice.js';

// The four kinds of event source a controller has, each turned into its own stream of queue
// keys: its primary kind, the kinds it owns, the kinds it watches through a mapper, and
// streams from outside Kubernetes. Each is isolated: a user function that throws skips its
// event, a source that fails is subscribed again, and none can end the others.

/** A related kind whose events are mapped to requests of the primary kind. */
export interface WatchSource<R = KubeObject> extends ObjectSelector {
  resource: ResourceDescriptor<R>;
  /**
   * The requests an event affects. It may be async (it may read the cache: a field index,
   * `client.list`): up to MAPPERS_IN_FLIGHT run at once per watch, each bounded by
   * MAPPER_TIMEOUT_MS. Method syntax on purpose: a mapper of a concrete kind is a mapper of KubeObject.
   */
  map(object: R, event: ResourceEvent<R>): Mapped | Promise<Mapped>;
  /** Several namespaces, one informer each (instead of `namespace`). */
  namespaces?: readonly string[];
  /**
   * Where the kind is watched (a manager with a fleet): the controller's own cluster
   * ('local', the default), every member cluster ('members'), both ('all'), or the members a
   * function picks. The mapper's event names the member (`event.cluster`); the requests it
   * returns are in the controller's cluster.
   */
  clusters?: ClusterSelection;
  /**
   * Cache and deliver only the objects' metadata (PartialObjectMetadata, as controller-runtime's
   * `OnlyMetadata`): the mapper sees apiVersion, kind and metadata, no spec or status. For
   * kinds the controller only maps, such as Secrets or Pods, it holds a fraction of the memory.
   */
  metadataOnly?: boolean;
  /**
   * What its informer keeps (see KeepChoice): left out, a skeleton per object (the mapper
   * gets each event's whole object; an update's `event.old`, and an object a resync finds
   * deleted, are skeletons: name, namespace, resourceVersion, generation, labels, owner
   * references) until a read from the cache asks for the objects; with predicates, the
   * objects (they compare old with new). 'objects' keeps them from the start.
   */
  keep?: KeepChoice;
  predicates?: Predicate<R>[];
}

/** What a mapper returns: the requests, one, or none. */
export type Mapped = ObjectRef[] | ObjectRef | undefined | null;

/** Async mappings of one watch at once; further events wait their turn (in order of arrival). */
export const MAPPERS_IN_FLIGHT = 16;
/** An async mapping that takes longer is reported as a mapper fault and its event skipped. */
export const MAPPER_TIMEOUT_MS = 30_000;

/** A stream of requests from outside Kubernetes, named for logs and metrics. */
export interface ExternalSource {
  name: string;
  stream: Observable<ObjectRef | ObjectRef[]>;
  /**
   * For a source fed by informers of other caches (a watch of member clusters): given the
   * controller's `note` when it subscribes, called with each key the stream is about to
   * emit, so that the run waits for those caches as for its own (see EventVersions).
   * @internal
   */
  noteWith?(note: SourceNote): void;
}

/** @internal A key a source queues, the event's informer and object, and who serves reads of that kind there. */
export type SourceNote = (
  key: string,
  informer: Informer<KubeObject>,
  object: KubeObject,
  readers: (resource: ResourceDescriptor, namespace: string | undefined) => readonly Informer<KubeObject>[],
) => void;

/** What went wrong in one stream; the event is skipped or the source subscribed again. */
export interface StreamFault {
  /** The stream: `configmaps`, `owns deployments.apps`, `watches secrets`, or the source's name. */
  stream: string;
  /** What failed: a predicate, a mapper, a bad request from a source, or the source itself. */
  kind: 'predicate' | 'mapper' | 'invalid-request' | 'source-error' | 'source-complete';
  error: Error;
  /** The object whose event was skipped, if any. */
  object?: KubeObject;
  /** For a failed source: how long until it is subscribed again. */
  retryInMs?: number;
}

export type FaultReporter = (fault: StreamFault) => void;

/** What a fault did to its stream, for the log. */
export function faultMessage({ kind, retryInMs }: StreamFault): string {
  return {
    predicate: 'a predicate threw; the event is skipped',
    mapper: 'the mapper threw; the event is skipped',
    'invalid-request': 'a request is not an object reference; it is skipped',
    'source-error': `the source failed${retryInMs !== undefined ? `; subscribing again in ${retryInMs} ms` : ''}`,
    'source-complete': `the source completed; subscribing again in ${retryInMs ?? 0} ms`,
  }[kind];
}

/**
 * The request of an event that only echoes the controller's own write (see WriteEchoes):
 * queued behind the requests of other changes.
 */
export class Echo {
  constructor(readonly key: string) {}
}

/** Whether an event of the object `key` echoes the controller's own write to it (it is then forgotten). */
export type EchoCheck = (key: string, object: KubeObject) => boolean;

/** Told of each key an informer's event queues, with the event's object (see EventVersions). */
export type QueuedBy = (key: string, object: KubeObject) => void;

/**
 * The primary kind: each event that passes the predicates requests its own object; with
 * `echoOf`, an update that echoes the controller's own write requests it as an Echo.
 */
export function primaryKeys<T extends KubeObject>(
  name: string,
  informer: Informer<T>,
  predicates: Predicate<T>[],
  report: FaultReporter,
  echoOf?: EchoCheck,
  queuedBy?: QueuedBy,
): Observable<string | Echo> {
  return replayThenFollow(informer).pipe(
    rx.mergeMap((event) => {
      if (!passes(name, predicates, event, report)) return [];
      const key = keyOf(refOfObject(event.object));
      queuedBy?.(key, event.object);
      return [echoOf?.(key, event.object) && event.type === 'updated' ? new Echo(key) : key];
    }),
  );
}

/** The key of each object as it appears in the cache (those already there first). */
export function addedKeys<T extends KubeObject>(informer: Informer<T>): Observable<string> {
  return replayThenFollow(informer).pipe(
    rx.mergeMap((event) => (event.type === 'added' ? [keyOf(refOfObject(event.object))] : [])),
  );
}

/**
 * An owned kind: an event requests the controller owner (of the old and the new object)
 * when it is of `owner`'s kind; with `echoOf`, as an Echo when the event echoes the
 * controller's own write to that child.
 */
export function ownedKeys(
  informer: Informer<KubeObject>,
  owner: ResourceDescriptor,
  echoOf?: EchoCheck,
  queuedBy?: QueuedBy,
): Observable<string | Echo> {
  return replayThenFollow(informer).pipe(
    rx.mergeMap((event) => {
      const keys = new Set<string>();
      for (const object of event.old ? [event.old, event.object] : [event.object]) {
        const key = ownerKey(object, owner);
        if (key) keys.add(key);
      }
      if (queuedBy) for (const key of keys) queuedBy(key, event.object);
      if (!echoOf || keys.size === 0) return [...keys];
      const echo = echoOf(keyOf(refOfObject(event.object)), event.object) && event.type !== 'deleted';
      return echo ? [...keys].map((key) => new Echo(key)) : [...keys];
    }),
  );
}

/** A watched kind: the user's mapper says which requests an event affects. */
export function watchedKeys(
  name: string,
  informer: Informer<KubeObject>,
  watch: WatchSource<KubeObject>,
  report: FaultReporter,
  queuedBy?: QueuedBy,
): Observable<string> {
  const keysOf = (mapped: Mapped, object: KubeObject) => {
    const keys = requestKeys(name, mapped, report);
    if (queuedBy) for (const key of keys) queuedBy(key, object);
    return keys;
  };
  return mappedEvents(name, informer, watch, report, (event) => event, keysOf);
}

/**
 * An informer's events through a watch's predicates and mapper, each turned into what `emit`
 * makes of the mapper's result; up to MAPPERS_IN_FLIGHT async mappers at once. `seen` is the
 * event as predicates and mapper see it (a member cluster's events name their cluster).
 */
export function mappedEvents<R>(
  name: string,
  informer: Informer<KubeObject>,
  watch: WatchSource<KubeObject>,
  report: FaultReporter,
  seen: (event: ResourceEvent<KubeObject>) => ResourceEvent<KubeObject>,
  emit: (mapped: Mapped, object: KubeObject) => R[],
): Observable<R> {
  const predicates = watch.predicates ?? [];
  return replayThenFollow(informer).pipe(
    rx.mergeMap((event): ObservableInput<R> => {
      const shown = seen(event);
      if (!passes(name, predicates, shown, report)) return [];
      const mapped = mapEvent(name, watch, shown, report);
      return isPromise(mapped)
        ? rx.from(mapped.then((result) => emit(result, event.object))).pipe(rx.mergeMap((out) => out))
        : emit(mapped, event.object);
    }, MAPPERS_IN_FLIGHT),
  );
}

/**
 * Runs the watch's mapper on one event: its result, or a promise of it that never rejects
 * (a failure or a mapping past MAPPER_TIMEOUT_MS is reported, and maps to nothing).
 */
export function mapEvent<R extends KubeObject>(
  name: string,
  watch: Pick<WatchSource<R>, 'map'>,
  event: ResourceEvent<R>,
  report: FaultReporter,
): Mapped | Promise<Mapped> {
  const failed = (error: unknown) => {
    report({ stream: name, kind: 'mapper', error: toError(error), object: event.object });
    return undefined;
  };
  let mapped: Mapped | Promise<Mapped>;
  try {
    mapped = watch.map(event.object, event);
  } catch (error) {
    return failed(error);
  }
  if (!isPromise(mapped)) return mapped;
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    deadline = setTimeout(
      () => reject(new Error(`the mapper did not answer within ${MAPPER_TIMEOUT_MS} ms`)),
      MAPPER_TIMEOUT_MS,
    );
    deadline.unref?.();
  });
  return Promise.race([mapped, late]).then(
    (result) => (clearTimeout(deadline), result),
    (error: unknown) => (clearTimeout(deadline), failed(error)),
  );
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}

/**
 * A stream from outside Kubernetes (a poller, a message stream). It is subscribed again,
 * with jittered exponential backoff (which starts over after two quiet minutes), when it
 * errors or completes: a source that stops would otherwise stop feeding the controller
 * for good, silently.
 */
export function externalKeys(
  source: ExternalSource,
  report: FaultReporter,
  backoff = new Backoff(),
): Observable<string> {
  const again = (kind: 'source-error' | 'source-complete', error: Error) => {
    const retryInMs = backoff.next();
    report({ stream: source.name, kind, error, retryInMs });
    return rx.timer(retryInMs);
  };
  return rx
    .defer(() => source.stream)
    .pipe(
      rx.mergeMap((refs) => requestKeys(source.name, refs, report)),
      rx.retry({ delay: (error: unknown) => again('source-error', toError(error)) }),
      rx.repeat({ delay: () => again('source-complete', new Error('the source completed')) }),
    );
}

/** The informer's current content as 'added' events, then its live events (the queue's dedup makes overlap harmless). */
export function replayThenFollow<T extends KubeObject>(informer: Informer<T>): Observable<ResourceEvent<T>> {
  return new rx.Observable<ResourceEvent<T>>((subscriber) => {
    const live = informer.events$.subscribe(subscriber);
    const replay = () => {
      for (const object of informer.list()) subscriber.next({ type: 'added', object });
    };
    // An informer that held skeletons and now fills with objects (a holder asked for them,
    // InformerCache.acquire) replays once they are in: its store holds skeletons until then,
    // and the fill emits nothing for an object that did not change, so a holder of objects
    // would never see some of them whole. Its live events meanwhile carry whole objects.
    if (!informer.filling) replay();
    else
      informer.whenSynced().then(
        () => subscriber.closed || replay(),
        () => {}, // stopped first: nothing to replay
      );
    return live;
  });
}

function passes<T>(name: string, predicates: Predicate<T>[], event: ResourceEvent<T>, report: FaultReporter): boolean {
  try {
    return predicates.every((p) => p(event));
  } catch (error) {
    report({ stream: name, kind: 'predicate', error: toError(error), object: event.object as KubeObject });
    return false;
  }
}

/** The keys of what a mapper or a source produced; anything that is not a request is reported and skipped. */
function requestKeys(name: string, refs: unknown, report: FaultReporter): string[] {
  if (refs === undefined || refs === null) return [];
  const keys: string[] = [];
  for (const ref of Array.isArray(refs) ? (refs as unknown[]) : [refs]) {
    if (isObjectRef(ref)) keys.push(keyOf(ref));
    else {
      const shown = JSON.stringify(ref) ?? String(ref);
      report({
        stream: name,
        kind: 'invalid-request',
        error: new Error(`${shown} is not a request: emit { name, namespace? } with a non-empty name`),
      });
    }
  }
  return keys;
}

export function isObjectRef(value: unknown): value is ObjectRef {
  if (typeof value !== 'object' || value === null) return false;
  const { name, namespace } = value as { name?: unknown; namespace?: unknown };
  return typeof name === 'string' && name !== '' && (namespace === undefined || typeof namespace === 'string');
}

/** The key of the object's controller owner when it is of the given kind. */
function ownerKey(object: KubeObject, owner: ResourceDescriptor): string | undefined {
  const ref = object.metadata?.ownerReferences?.find((o) => o.controller);
  // Owner references name a group/version; any version of the owner's group matches.
  if (!ref || ref.kind !== owner.kind || groupOf(ref.apiVersion) !== owner.group) return undefined;
  const namespace = owner.namespaced ? object.metadata?.namespace : undefined;
  return keyOf(namespace ? { namespace, name: ref.name } : { name: ref.name });
}

/** The group of an apiVersion: 'apps' of 'apps/v1', '' of 'v1'. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}
