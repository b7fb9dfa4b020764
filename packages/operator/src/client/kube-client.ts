// The client seam, as controller-runtime's client.Client: what a reconciler reads and writes
// through. HttpKubeClient implements it over the API server; @nestor/operator/fake's
// FakeKubeClient over a map in memory. An abstract class rather than an interface, so that
// it exists at run time: Nest injects it by this class (`constructor(kube: KubeClient)`),
// and tests swap the implementation behind it (`overrideProvider(KubeClient)`).
import { KubeApiError, sleep, type KubeObject, type ObjectRef, type ResourceDescriptor } from '@nestor/core';
import type { RecordOptions } from './event-recorder.js';
import type { EventType } from './event-series.js';
import type { KindRegistry } from './kind-registry.js';
import type { ObjectSelector } from './object-selector.js';

export type { EventType };

/** Which objects a list returns: namespace, label and field selectors, or a field index. */
export interface ListOptions extends ObjectSelector {
  /**
   * The objects a field index files under a value, as `{ indexName: value }`
   * (controller-runtime's MatchingFields): read from the cache, never the API server, so the
   * kind must be cached (a controller's kind, an owned or watched one); the index is declared
   * on the kind (`indexes` of a controller, or `manager.indexField`). One index per list, not
   * with the label or field selector.
   */
  index?: Readonly<Record<string, string>>;
}

/** The one index entry of a list, or undefined; throws on a list that asks too much of it. */
export function indexOfList(resource: ResourceDescriptor, options: ListOptions): [string, string] | undefined {
  if (!options.index) return undefined;
  const entries = Object.entries(options.index);
  if (entries.length !== 1) {
    throw new Error(
      `list(${resource.kind}) takes one field index at a time, got ${entries.length}: list by one and filter the result`,
    );
  }
  if (options.labelSelector || options.fieldSelector) {
    throw new Error(
      `list(${resource.kind}) with an index reads the cache and cannot also take a label or field selector: filter the result instead`,
    );
  }
  return entries[0]!;
}

/** Options of a server-side apply: the field manager, force, dry run. */
export interface ApplyOptions {
  /** Makes this object the controller owner of the applied one (and lets GC delete it with the owner). */
  owner?: KubeObject;
  /** Take over fields another manager owns (default true, as controllers do). */
  force?: boolean;
  fieldManager?: string;
}

/** Options of a delete: propagation policy, preconditions, grace period. */
export interface DeleteOptions {
  /** What happens to the objects it owns (default 'Background': the garbage collector deletes them after it). */
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

/** Whose writes a client makes, and what cuts them short (see KubeClient.scoped). */
export interface ClientScope {
  /** The controller whose writes these are: its Lease fences them, its name reports their Events. */
  controller?: string;
  /** Cuts every request of the client when it aborts (a reconcile's signal). */
  signal?: AbortSignal;
}

/** The patch formats of `patch`: JSON merge patch, JSON patch, strategic merge patch. */
export type PatchType = 'merge' | 'json' | 'strategic';

/**
 * Typed reads and writes of Kubernetes objects for reconcilers: get and list, create,
 * replace, delete, patch, server-side apply, status, finalizers, Events. In Nest, inject it
 * by this class; without Nest, the manager makes one (`manager.client`).
 */
export abstract class KubeClient {
  /** Field manager of writes and server-side applies. */
  abstract readonly fieldManager: string;
  /** Where `apply(object)` and the other object-taking methods find the object's resource. */
  abstract readonly kinds: KindRegistry;

  constructor() {
    // JavaScript lets `new KubeClient(transport)` through (KubeClient was the HTTP client once): say what to use.
    if (new.target === KubeClient) {
      throw new TypeError(
        "KubeClient is the interface of the clients: use the manager's (`manager.client`), inject KubeClient in Nest, or construct `new HttpKubeClient(transport, options)`",
      );
    }
  }

  /**
   * This client for one controller's writes, cut by one signal, reading nothing from the
   * ambient context. The manager hands one to each reconcile (`request.client`).
   */
  abstract scoped(scope: ClientScope): KubeClient;

  /** The object, or undefined when it does not exist. */
  abstract get<T>(resource: ResourceDescriptor<T>, ref: ObjectRef): Promise<T | undefined>;

  /** Objects of a kind, in a namespace or all, filtered by label and field selectors. */
  abstract list<T>(resource: ResourceDescriptor<T>, options?: ListOptions): Promise<T[]>;

  /** Creates the object; fails with 409 AlreadyExists when it exists. */
  abstract create<T extends KubeObject>(object: T, resource?: ResourceDescriptor): Promise<T>;

  /** PUT: replaces the object; fails with 409 Conflict when its resourceVersion is stale. */
  abstract replace<T extends KubeObject>(object: T, resource?: ResourceDescriptor): Promise<T>;

  /** Deletes the object; true when it was there. */
  abstract delete(resource: ResourceDescriptor, ref: ObjectRef, options?: DeleteOptions): Promise<boolean>;

  /** Patches the object, or its status or scale subresource (default: a JSON merge patch). */
  abstract patch<T>(
    resource: ResourceDescriptor<T>,
    ref: ObjectRef,
    patch: unknown,
    type?: PatchType,
    subresource?: 'status' | 'scale',
  ): Promise<T>;

  /**
   * Server-side apply: the API server merges the fields this operator sets and owns them.
   * Idempotent, conflict-free for controllers, and the object carries only what you say.
   */
  abstract apply<T extends KubeObject>(object: T, options?: ApplyOptions): Promise<T>;

  /** Merge-patches the status subresource. */
  abstract patchStatus<T extends KubeObject>(object: T, status: Record<string, unknown> | object): Promise<T>;

  /** Server-side applies the status subresource (fields owned by this client's field manager). */
  abstract applyStatus<T extends KubeObject>(object: T, status: Record<string, unknown> | object): Promise<T>;

  /** Adds a finalizer unless present; returns the updated object (or the same when nothing changed). */
  abstract addFinalizer<T extends KubeObject>(object: T, finalizer: string): Promise<T>;

  /** Removes a finalizer if present; the object is gone once its last finalizer is, if it was being deleted. */
  abstract removeFinalizer<T extends KubeObject>(object: T, finalizer: string): Promise<T>;

  /**
   * Runs `update` on the freshest object and retries it on 409 Conflict, as client-go's
   * retry.RetryOnConflict: `update` receives the current object and returns the write.
   */
  async retryOnConflict<T>(read: () => Promise<T>, update: (current: T) => Promise<T>, attempts = 5): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await update(await read());
      } catch (error) {
        if (!(error instanceof KubeApiError && error.status === 409) || attempt >= attempts) throw error;
        const wait = this.conflictBackoffMs(attempt);
        if (wait > 0) await sleep(wait);
      }
    }
  }

  /** The pause before the next try after `attempt` conflicts: client-go's jittered exponential. */
  protected conflictBackoffMs(attempt: number): number {
    return 10 * 2 ** attempt * (0.5 + Math.random());
  }

  /**
   * Records an Event about the object (shown by `kubectl describe` and `kubectl events`),
   * best effort: never fails and never waits for the API server.
   */
  abstract recordEvent(
    object: KubeObject,
    type: EventType,
    reason: string,
    message: string,
    options?: RecordOptions,
  ): Promise<void>;
}
