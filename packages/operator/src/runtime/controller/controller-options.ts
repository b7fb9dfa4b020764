// What a controller is given: its kind, owned and watched kinds, external sources, timers,
// its reconciler and the run's limits; and the checks of what a user may get wrong in it.
import {
  resourceName,
  type Clock,
  type KubeObject,
  type ObjectRef,
  type ResourceDescriptor,
  type RuntimeLogger,
} from '@nestor/core';
import type { Observable } from 'rxjs';
import type { EventRecorder } from '../../client/event-recorder.js';
import type { KubeClient } from '../../client/kube-client.js';
import type { ObjectSelector } from '../../client/object-selector.js';
import type { WriteEchoes } from '../../client/write-echoes.js';
import { show } from '../options-check.js';
import type { RateLimiter } from '../queue/rate-limiter.js';
import type { ClusterSelection } from './cluster-selection.js';
import { checkKeep, decideKeep, watchedKind, type KeepChoice, type RelatedKind } from '../cache/keep-choice.js';
import type { ExternalSource, WatchSource } from './event-sources.js';
import type { ObjectTimer } from './object-timers.js';
import type { FieldIndexer } from '../cache/field-index.js';
import type { Predicate } from './predicates.js';
import type { ControllerMetricsSink } from './reconcile-loop.js';
import type { Reconciler } from './reconciler.js';

/**
 * What whoever makes a controller binds it to: the client its runs read and write through
 * (a manager's, or one member cluster's in a fleet) and the name of that client's cluster.
 */
export interface ClusterBinding {
  readonly client: KubeClient;
  readonly cluster?: string;
}

/**
 * An owned kind with options: `metadataOnly` watches only its objects' metadata (all the
 * owner mapping reads); `keep` says what its informer keeps (see KeepChoice). Left out, a
 * skeleton per child (enough to map its events to the owner, as kube-rs keeps nothing of
 * an owned kind) until a read from the cache asks for the children: then the informer keeps
 * them, and that read and the next are served from it.
 */
export interface OwnedResource {
  resource: ResourceDescriptor;
  metadataOnly?: boolean;
  keep?: KeepChoice;
}

export interface ManagedControllerOptions<T> extends ObjectSelector {
  /** Unique name: metrics label, log field, queue name. */
  name: string;
  /** The primary kind. Absent for a controller fed only by `sources`. */
  resource?: ResourceDescriptor<T>;
  reconcile: Reconciler<T>;
  /** Watch the primary kind in this namespace only (default: all, or the manager's). */
  namespace?: string;
  /**
   * Watch the primary kind (and the owned kinds) in these namespaces only: one informer per
   * namespace, as controller-runtime's cache with several DefaultNamespaces. Not with `namespace`.
   */
  namespaces?: readonly string[];
  /** Filters for the primary kind's events. */
  predicates?: Predicate<T>[];
  /**
   * Field indexes of the primary kind, by name (controller-runtime's IndexField): a mapper or
   * reconcile reads them with `client.list(Kind, { index: { name: value } })`, from the cache.
   */
  indexes?: Readonly<Record<string, FieldIndexer<T>>>;
  /** Kinds this controller creates: their events reconcile the controller owner. */
  owns?: Array<ResourceDescriptor | OwnedResource>;
  /** Other kinds whose events map to requests. */
  watches?: WatchSource<KubeObject>[];
  /**
   * Any stream of requests: a poller over an external API, a message stream. Subscribed
   * again with backoff when it errors or completes. Name it for logs and metrics.
   */
  sources?: Array<Observable<ObjectRef | ObjectRef[]> | ExternalSource>;
  /**
   * Periodic actions on each object of the primary kind (kopf's timers), never at the same
   * time as the object's reconcile; they share the controller's workers.
   */
  timers?: ObjectTimer<T>[];
  /** Reconciles of this controller at once (default 1). */
  maxConcurrentReconciles?: number;
  /** Abort a reconcile after this long and retry it with backoff. */
  reconcileTimeoutMs?: number;
  rateLimiter?: RateLimiter<string>;
  /**
   * Give up on an object after this many failed reconciles in a row (kooper's max retries):
   * no more backoff retries until it changes; a Warning Event, a log line and
   * nestor_reconcile_retries_exhausted_total say so. Default: retry for ever.
   */
  maxRetries?: number;
  /**
   * With a sharded manager: false keeps this controller on the elected leader, over every
   * object (default true for a controller with a kind; one without is never sharded).
   */
  sharded?: boolean;
  /**
   * Which clusters the controller runs in (a manager with a `fleet`): its own ('local', the
   * default), every engaged member cluster ('members'), both ('all'), or the clusters a
   * function picks by name (the manager's own is named by `clusterName`, 'default'). In
   * each cluster it has its own informers and queue, and a lane of the shared worker pool.
   */
  clusters?: ClusterSelection;
  /**
   * Set by a sharded manager: the primary and owned kinds are watched with this extra label
   * selector (this shard's objects only), an object for which `bypass` is true (a drain
   * request) passes the predicates, and `childSeen` hears of each child added to or changed
   * in the owned informers.
   */
  shard?: {
    selector: string;
    bypass(object: KubeObject): boolean;
    childSeen?(resource: ResourceDescriptor, child: KubeObject): void;
  };
  /** Records the Warning Event of maxRetries (the manager passes its recorder). */
  events?: EventRecorder;
  /**
   * Scoped to this controller and each run's signal, it is `request.client` in its
   * reconciles and timers. Optional to `manager.addController`, which passes
   * `manager.client`; required to `new ManagedController` (see ManagedController).
   */
  client?: KubeClient;
  /**
   * Where `client`'s writes are noted (the manager passes its client's): the events that
   * echo this controller's own writes to its objects and their children are queued behind
   * other changes.
   * @internal
   */
  echoes?: WriteEchoes;
  /** Set by the manager, whose OutageGate holds dispatch while the API server is unreachable. */
  outageHold?: boolean;
  logger?: RuntimeLogger;
  metrics?: ControllerMetricsSink;
  clock?: Clock;
}

/** A namespace list: not empty, no duplicates, not with `namespace` as well. */
export function checkNamespaces(
  controller: string,
  namespace: string | undefined,
  namespaces: readonly string[],
): void {
  const where = `controller ${controller}: namespaces`;
  if (namespace !== undefined) {
    throw new Error(`${where}: give either namespace (${show(namespace)}) or namespaces, not both`);
  }
  if (!Array.isArray(namespaces) || namespaces.length === 0) {
    throw new Error(
      `${where} must be a non-empty list of namespace names, got ${show(namespaces)}; leave it out to watch all`,
    );
  }
  const seen = new Set<string>();
  for (const name of namespaces) {
    if (typeof name !== 'string' || name === '') throw new Error(`${where}: ${show(name)} is not a namespace name`);
    if (seen.has(name)) throw new Error(`${where}: ${show(name)} is listed twice`);
    seen.add(name);
  }
}

/** Each owned and watched kind's `keep`: a KeepChoice, and not 'objects' with metadataOnly. */
export function checkKeeps(
  controller: string,
  { owns = [], watches = [] }: Pick<ManagedControllerOptions<KubeObject>, 'owns' | 'watches'>,
): void {
  const check = (where: string, kind: RelatedKind) => {
    checkKeep(kind.keep, `${where}.keep`);
    try {
      decideKeep(kind);
    } catch (error) {
      throw new Error(`${where}: ${(error as Error).message}`, { cause: error });
    }
  };
  owns.forEach((entry, i) => {
    if ('resource' in entry)
      check(`controller ${controller}: owns[${i}] (${resourceName(entry.resource)})`, { role: 'owns', ...entry });
  });
  watches.forEach((watch, i) =>
    check(`controller ${controller}: watches[${i}] (${resourceName(watch.resource)})`, watchedKind(watch)),
  );
}

/** The kinds a controller reads and writes: its own, the owned and the watched ones. */
export function controllerKinds(options: ManagedControllerOptions<KubeObject>): ResourceDescriptor[] {
  const owned = (options.owns ?? []).map((o) => ('resource' in o ? o.resource : o));
  const watched = (options.watches ?? []).map((w) => w.resource as ResourceDescriptor);
  return [...(options.resource ? [options.resource as ResourceDescriptor] : []), ...owned, ...watched];
}

export type { ClusterSelection };
