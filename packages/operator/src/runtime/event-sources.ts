import { keyOf, refOfObject, type KubeObject, type ObjectRef, type ResourceDescriptor } from '@nestor/core';
import { filter, mergeMap, Observable } from 'rxjs';
import type { Informer } from './informer.js';
import type { Predicate, ResourceEvent } from './predicates.js';

// The four kinds of event source a controller has, each turned into a stream of queue keys:
// its primary kind, the kinds it owns, the kinds it watches through a mapper, and streams
// from outside Kubernetes. The controller merges them into its queue.

/** A related kind whose events are mapped to requests of the primary kind. */
export interface WatchSource<R = KubeObject> {
  resource: ResourceDescriptor<R>;
  /** Method syntax on purpose: a mapper of a concrete kind is a mapper of KubeObject. */
  map(object: R, event: ResourceEvent<R>): ObjectRef[] | ObjectRef | undefined | null;
  namespace?: string;
  labelSelector?: string;
  predicates?: Predicate<R>[];
}

/** The primary kind: each event that passes the predicates requests its own object. */
export function primaryKeys<T extends KubeObject>(
  informer: Informer<T>,
  predicates: Predicate<T>[] = [],
): Observable<string> {
  return replayThenFollow(informer).pipe(
    filter((event) => predicates.every((p) => p(event))),
    mergeMap((event) => [keyOf(refOfObject(event.object))]),
  );
}

/** An owned kind: an event requests the controller owner (of the old and the new object) when it is of `owner`'s kind. */
export function ownedKeys(informer: Informer<KubeObject>, owner: ResourceDescriptor): Observable<string> {
  return replayThenFollow(informer).pipe(
    mergeMap((event) => {
      const keys = new Set<string>();
      for (const object of event.old ? [event.old, event.object] : [event.object]) {
        const key = ownerKey(object, owner);
        if (key) keys.add(key);
      }
      return [...keys];
    }),
  );
}

/** A watched kind: the user's mapper says which requests an event affects. */
export function watchedKeys(
  informer: Informer<KubeObject>,
  watch: WatchSource<KubeObject>,
  onMapperError: (error: unknown, event: ResourceEvent<KubeObject>) => void,
): Observable<string> {
  const predicates = watch.predicates ?? [];
  return replayThenFollow(informer).pipe(
    filter((event) => predicates.every((p) => p(event))),
    mergeMap((event) => {
      try {
        const mapped = watch.map(event.object, event);
        if (!mapped) return [];
        return (Array.isArray(mapped) ? mapped : [mapped]).map((ref) => keyOf(ref));
      } catch (error) {
        onMapperError(error, event);
        return [];
      }
    }),
  );
}

/** A stream from outside Kubernetes (a poller, a message stream) of requests. */
export function externalKeys(source: Observable<ObjectRef | ObjectRef[]>): Observable<string> {
  return source.pipe(mergeMap((refs) => (Array.isArray(refs) ? refs : [refs]).map((ref) => keyOf(ref))));
}

/** The informer's current content as 'added' events, then its live events (the queue's dedup makes overlap harmless). */
export function replayThenFollow<T extends KubeObject>(informer: Informer<T>): Observable<ResourceEvent<T>> {
  return new Observable<ResourceEvent<T>>((subscriber) => {
    const live = informer.events$.subscribe(subscriber);
    for (const object of informer.list()) subscriber.next({ type: 'added', object });
    return live;
  });
}

/** The key of the object's controller owner when it is of the given kind. */
function ownerKey(object: KubeObject, owner: ResourceDescriptor): string | undefined {
  const ref = object.metadata?.ownerReferences?.find((o) => o.controller);
  // Owner references name a group/version; any version of the owner's group matches.
  if (!ref || ref.kind !== owner.kind || groupOf(ref.apiVersion) !== owner.group) return undefined;
  const namespace = owner.namespaced ? object.metadata?.namespace : undefined;
  return keyOf(namespace ? { namespace, name: ref.name } : { name: ref.name });
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}
