import { keyOf, type KubeObject, type ObjectRef, resourceName, type RuntimeLogger } from '@nestor/core';
import { Observable } from '../rx.js';
import type { InformerHandle } from '../cache/informer-cache.js';
import { decideKeep, watchedKind } from '../cache/keep-choice.js';
import { selectsMember } from '../controller/cluster-selection.js';
import {
  type ExternalSource,
  isObjectRef,
  type Mapped,
  mappedEvents,
  type SourceNote,
  type StreamFault,
  type WatchSource,
} from '../controller/event-sources.js';
import type { ReadersOf } from '../controller/event-versions.js';
import type { ResourceEvent } from '../controller/predicates.js';
import type { Member } from './member.js';

/** The members engaged now, and each engagement and disengagement after. */
export interface Engagements {
  engaged(): Iterable<Member>;
  readonly changes$: Observable<{ member: Member; engaged: boolean }>;
}

/**
 * A watch of a kind in member clusters, mapped to requests of a controller in the manager's
 * own cluster (a cluster-aware reconciler: Secrets in the members mapped to the CR in the
 * management cluster that placed them): one informer per selected member, held from its
 * engagement to its disengagement, its events mapped with `event.cluster` naming the member.
 */
export function memberWatch(
  engagements: Engagements,
  watch: WatchSource<KubeObject>,
  log: RuntimeLogger,
): ExternalSource {
  const name = `watches ${resourceName(watch.resource)} in member clusters`;
  /** The controller's note of each key's event: its run waits for the member's cache too. */
  let note: SourceNote | undefined;
  const stream = new Observable<ObjectRef[]>((subscriber) => {
    const held = new Map<Member, () => void>();
    const follow = (member: Member) => {
      const cluster = member.cluster;
      if (held.has(member) || !cluster || !selectsMember(watch.clusters, member.name)) return;
      const namespaces = watch.resource.namespaced ? (watch.namespaces ?? [watch.namespace]) : [undefined];
      // What its informers keep: as a controller's own watch (decideKeep), by the member's cache settings.
      const kept = decideKeep({ ...watchedKind(watch), kindKeep: cluster.informers.keepOf(watch.resource) });
      log.debug(`${name}, in cluster ${member.name}: ${kept.why}`, { cluster: member.name });
      const handles: InformerHandle<KubeObject>[] = namespaces.map((namespace) =>
        cluster.informers.acquire(watch.resource, {
          ...(namespace ? { namespace } : {}),
          ...(watch.labelSelector ? { labelSelector: watch.labelSelector } : {}),
          ...(watch.fieldSelector ? { fieldSelector: watch.fieldSelector } : {}),
          ...kept.selector,
        }),
      );
      const report = ({ kind, error, object }: StreamFault) =>
        log.warn(
          `${name}: the ${kind} failed on ${object?.metadata?.namespace ?? ''}/${object?.metadata?.name ?? ''} in cluster ${member.name}: ${error.message}`,
        );
      // As a controller's own watch: predicates, then the mapper, up to MAPPERS_IN_FLIGHT at once.
      const seen = (event: ResourceEvent<KubeObject>) => ({ ...event, cluster: member.name });
      const readers: ReadersOf = (kind, namespace) => cluster.informers.readersOf(kind, namespace);
      const subscriptions = handles.map(({ informer }) => {
        const refs = (mapped: Mapped, object: KubeObject) => {
          if (!mapped) return [];
          const list = Array.isArray(mapped) ? mapped : [mapped];
          if (note) for (const ref of list) if (isObjectRef(ref)) note(keyOf(ref), informer, object, readers);
          return [list];
        };
        return mappedEvents(name, informer, watch, report, seen, refs).subscribe((list) => subscriber.next(list));
      });
      held.set(member, () => {
        for (const subscription of subscriptions) subscription.unsubscribe();
        for (const handle of handles) handle.release();
      });
    };
    const drop = (member: Member) => {
      held.get(member)?.();
      held.delete(member);
    };
    for (const member of engagements.engaged()) follow(member);
    const changes = engagements.changes$.subscribe(({ member, engaged }) => (engaged ? follow(member) : drop(member)));
    return () => {
      changes.unsubscribe();
      for (const member of [...held.keys()]) drop(member);
    };
  });
  return { name, stream, noteWith: (given) => void (note = given) };
}
