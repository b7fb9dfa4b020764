import {
  apiVersionOf,
  DEFAULT_FIELD_MANAGER,
  keyOf,
  KubeApiError,
  type KubeObject,
  listPages,
  type RequestOptions,
  type ObjectRef,
  type OwnerReference,
  type ResourceDescriptor,
  resourceName,
  resourcePath,
  type Transport,
} from '@nestor/core';
import { EventRecorder, type RecordOptions } from './event-recorder.js';
import { KindRegistry } from './kind-registry.js';
import { traced, type KubeRequest } from './request-span.js';
import { currentRun } from './run-context.js';
import type { CacheReader, CachedObjects } from './cache-reader.js';
import type { ClientReads } from './client-reads.js';
import type { WriteFence } from './write-fence.js';
import { WriteEchoes } from './write-echoes.js';
import {
  KubeClient,
  type ApplyOptions,
  type ClientScope,
  type DeleteOptions,
  type EventType,
  indexOfList,
  type ListOptions,
  type PatchType,
} from './kube-client.js';

export type { WriteFence };
export type { CacheReader, CachedObjects };

export interface KubeClientOptions {
  /** Field manager for server-side apply and writes (default 'nestor'). */
  fieldManager?: string;
  /** Serves get/list from a running informer when one covers the request. */
  informers?: CacheReader;
  /** Told of each read and whether the cache or the API server served it. */
  reads?: ClientReads;
  kinds?: KindRegistry;
  /** The reporting controller of Events recorded outside a reconcile (default: the field manager). */
  component?: string;
  /**
   * The recorder behind recordEvent (the manager's, so its shutdown flushes it). Default:
   * one of the client's own on its transport; close it with `kube.events.close()`.
   */
  events?: EventRecorder;
  /**
   * Fences every write (create, replace, delete, patch, apply, status, finalizers, events),
   * so a replica that lost its Lease, or was frozen past it, writes nothing. The manager's
   * client (`manager.client`, the Nest module's KubeClient) has its Leases' fence.
   */
  fence?: WriteFence;
  /** See ClientScope: set by scoped(); without it, the ambient context is read per call. */
  scope?: ClientScope;
  /**
   * Where the controllers' writes are noted, to know their watch events as echoes (default: the client's own).
   * @internal
   */
  echoes?: WriteEchoes;
  /**
   * Labels added to each object the client creates, replaces or applies (a sharded
   * manager's: a child of an owner on this shard gets the owner's shard label, so that it
   * is born into that shard's selection with no write of its own). Undefined: none.
   */
  childLabels?: (object: KubeObject, resource: ResourceDescriptor) => Record<string, string> | undefined;
}

const CONTENT_TYPES: Record<PatchType | 'apply', string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** The writes whose answer is the object written (a delete's begins work: finalizers). */
const WRITES: ReadonlySet<KubeRequest['verb']> = new Set(['create', 'update', 'patch']);

/**
 * The KubeClient of the API server: reads from the informer cache when one holds the kind,
 * writes over the operator's pooled transport, server-side apply with the operator's field
 * manager, status, finalizers, events.
 *
 * Whose write it is and what cuts it short is explicit in a scoped client (the one a
 * reconcile gets as `request.client`): the controller's Lease fences its writes and the
 * reconcile's signal cuts its requests. The unscoped client reads both from the ambient
 * context (the reconcile the caller runs in), so a helper handed the shared client is
 * fenced and cut alike.
 */
export class HttpKubeClient extends KubeClient {
  readonly fieldManager: string;
  readonly kinds: KindRegistry;
  /** The best-effort Event recorder recordEvent hands Events to. */
  readonly events: EventRecorder;
  /**
   * The resourceVersions the controllers' writes returned (see WriteEchoes); shared by scoped copies.
   * @internal
   */
  readonly echoes: WriteEchoes;
  /** What fences this client's writes: the scope's controller's fence when scoped. */
  private readonly fence: WriteFence | undefined;

  constructor(
    readonly transport: Transport,
    private readonly options: KubeClientOptions = {},
  ) {
    super();
    this.fieldManager = options.fieldManager ?? DEFAULT_FIELD_MANAGER;
    this.kinds = options.kinds ?? new KindRegistry();
    this.events =
      options.events ??
      new EventRecorder(transport, {
        reportingController: options.component ?? this.fieldManager,
        ...(options.fence ? { fence: options.fence } : {}),
      });
    this.echoes = options.echoes ?? new WriteEchoes();
    const { fence, scope } = options;
    this.fence = scope && fence?.of ? fence.of(scope.controller) : fence;
  }

  /**
   * This client, for one controller's writes cut by one signal: it shares the transport,
   * the cache, the kinds and the Event recorder, and reads nothing from the ambient
   * context. The manager hands one to each reconcile (`request.client`).
   */
  scoped(scope: ClientScope): HttpKubeClient {
    return new HttpKubeClient(this.transport, {
      ...this.options,
      kinds: this.kinds,
      events: this.events,
      echoes: this.echoes,
      scope,
    });
  }

  /**
   * The object, or undefined when it does not exist. From the cache when an informer holds
   * the kind, or will once this first read has it keep a kind it watched for events only.
   */
  async get<T>(resource: ResourceDescriptor<T>, ref: ObjectRef): Promise<T | undefined> {
    const cached = await this.cached(resource, ref.namespace);
    this.options.reads?.read(resource, 'get', cached ? 'cache' : 'server');
    if (cached) return cached.get(keyOf(ref)) as T | undefined;
    try {
      const request = { verb: 'get', resource, ...ref, absentIsAnswer: true } as const;
      return await this.json<T>(request, 'GET', resourcePath(resource, ref.namespace, ref.name));
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** Objects of a kind: from the cache when an informer covers it, else one paginated LIST. */
  async list<T>(resource: ResourceDescriptor<T>, options: ListOptions = {}): Promise<T[]> {
    const index = indexOfList(resource, options);
    if (index) {
      const found = this.options.informers?.byField?.(resource, index[0], index[1], options.namespace);
      if (found) {
        this.options.reads?.read(resource, 'list', 'cache');
        return found;
      }
      throw new Error(
        `list(${resource.kind}) by index "${index[0]}" reads the cache, and no synced informer holds every ${resource.kind}` +
          `${options.namespace ? ` of namespace ${options.namespace}` : ''}: list it in a controller that reconciles, owns or watches the kind (after its caches synced), or list without the index`,
      );
    }
    if (!options.labelSelector && !options.fieldSelector) {
      const cached = await this.cached(resource, options.namespace);
      if (cached) {
        this.options.reads?.read(resource, 'list', 'cache');
        return cached.list(options.namespace) as T[];
      }
    }
    this.options.reads?.read(resource, 'list', 'server');
    // One span for the whole list, its pages included: the call the reconciler made.
    return traced({ verb: 'list', resource, namespace: options.namespace }, 'GET', async (onStatus) => {
      let items: T[] = [];
      const query = { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
      const pages = listPages<T>(this.transport, resourcePath(resource, options.namespace), {
        query,
        signal: signalOf(this.options.scope),
      });
      for await (const page of pages) {
        if (page.restarted) items = [];
        for (const item of page.items) items.push(withKind(item, resource));
      }
      onStatus?.(200); // every page was answered 200: anything else threw
      return items;
    });
  }

  /** The cache's objects of the kind in the namespace, if it has them or starts keeping them for this read. */
  private cached<T>(
    resource: ResourceDescriptor<T>,
    namespace?: string,
  ): CachedObjects<T> | undefined | Promise<CachedObjects<T> | undefined> {
    const informers = this.options.informers;
    return (
      informers?.find(resource, namespace) ??
      informers?.whenReadable?.(resource, namespace, signalOf(this.options.scope))
    );
  }

  async create<T extends KubeObject>(object: T, resource = this.kinds.forObject(object)): Promise<T> {
    this.fence?.assertWritable();
    const { namespace, name } = object.metadata ?? {};
    return this.json<T>({ verb: 'create', resource, namespace, name }, 'POST', resourcePath(resource, namespace), {
      body: this.labelled(object, resource),
      query: { fieldManager: this.fieldManager },
    });
  }

  /** PUT: replaces the object; fails with 409 Conflict when its resourceVersion is stale. */
  async replace<T extends KubeObject>(object: T, resource = this.kinds.forObject(object)): Promise<T> {
    this.fence?.assertWritable();
    const { namespace, name } = requireName(object);
    return this.json<T>({ verb: 'update', resource, namespace, name }, 'PUT', resourcePath(resource, namespace, name), {
      body: this.labelled(object, resource),
      query: { fieldManager: this.fieldManager },
    });
  }

  /** Deletes the object; true when it was there. */
  async delete(resource: ResourceDescriptor, ref: ObjectRef, options: DeleteOptions = {}): Promise<boolean> {
    this.fence?.assertWritable();
    try {
      const request = { verb: 'delete', resource, ...ref, absentIsAnswer: true } as const;
      await this.json(request, 'DELETE', resourcePath(resource, ref.namespace, ref.name), {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: options.propagationPolicy ?? 'Background' },
      });
      return true;
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) return false;
      throw error;
    }
  }

  async patch<T>(
    resource: ResourceDescriptor<T>,
    ref: ObjectRef,
    patch: unknown,
    type: PatchType = 'merge',
    subresource?: 'status' | 'scale',
  ): Promise<T> {
    this.fence?.assertWritable();
    const path = resourcePath(resource, ref.namespace, ref.name) + (subresource ? `/${subresource}` : '');
    const request = { verb: 'patch', resource, ...ref, subresource, patchType: type } as const;
    return this.json<T>(request, 'PATCH', path, {
      body: patch,
      contentType: CONTENT_TYPES[type],
      query: { fieldManager: this.fieldManager },
    });
  }

  /**
   * Server-side apply: the API server merges the fields this operator sets and owns them.
   * Idempotent, conflict-free for controllers, and the object carries only what you say.
   */
  async apply<T extends KubeObject>(object: T, options: ApplyOptions = {}): Promise<T> {
    this.fence?.assertWritable();
    const resource = this.kinds.forObject(object);
    const { namespace, name } = requireName(object);
    const owned = options.owner ? withOwner(object, options.owner) : object;
    // Not with force: false: the label would conflict with the hand-over's write of it.
    const body = options.force === false ? owned : this.labelled(owned, resource);
    const request = { verb: 'patch', resource, namespace, name, patchType: 'apply' } as const;
    return this.json<T>(request, 'PATCH', resourcePath(resource, namespace, name), {
      body,
      contentType: CONTENT_TYPES.apply,
      query: { fieldManager: options.fieldManager ?? this.fieldManager, force: String(options.force ?? true) },
    });
  }

  /** Merge-patches the status subresource. */
  async patchStatus<T extends KubeObject>(object: T, status: Record<string, unknown> | object): Promise<T> {
    const resource = this.kinds.forObject(object);
    return this.patch(resource as ResourceDescriptor<T>, requireName(object), { status }, 'merge', 'status');
  }

  /** Server-side applies the status subresource (fields owned by this operator's field manager). */
  async applyStatus<T extends KubeObject>(object: T, status: Record<string, unknown> | object): Promise<T> {
    this.fence?.assertWritable();
    const resource = this.kinds.forObject(object);
    const { namespace, name } = requireName(object);
    const request = { verb: 'patch', resource, namespace, name, subresource: 'status', patchType: 'apply' } as const;
    return this.json<T>(request, 'PATCH', `${resourcePath(resource, namespace, name)}/status`, {
      body: { apiVersion: object.apiVersion, kind: object.kind, metadata: { name, namespace }, status },
      contentType: CONTENT_TYPES.apply,
      query: { fieldManager: this.fieldManager, force: 'true' },
    });
  }

  /** Adds a finalizer unless present; returns the updated object (or the same when nothing changed). */
  async addFinalizer<T extends KubeObject>(object: T, finalizer: string): Promise<T> {
    return this.updateFinalizers(object, (list) => (list.includes(finalizer) ? undefined : [...list, finalizer]));
  }

  /** Removes a finalizer if present. */
  async removeFinalizer<T extends KubeObject>(object: T, finalizer: string): Promise<T> {
    return this.updateFinalizers(object, (list) =>
      list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined,
    );
  }

  /**
   * Records an Event about the object (shown by `kubectl describe` and `kubectl events`),
   * best effort: handed to the recorder and written in the background (events.k8s.io/v1,
   * or core/v1 where it is not served), repeats counted into one Event, rate limited per
   * object. Never fails and never waits for the API server: awaiting it costs nothing.
   */
  async recordEvent(
    object: KubeObject,
    type: EventType,
    reason: string,
    message: string,
    options: RecordOptions = {},
  ): Promise<void> {
    const controller = this.options.scope?.controller;
    this.events.record(object, type, reason, message, controller === undefined ? options : { controller, ...options });
  }

  /** `object` with the labels childLabels gives it (a copy), or `object` itself. */
  private labelled<T extends KubeObject>(object: T, resource: ResourceDescriptor): T {
    const labels = this.options.childLabels?.(object, resource);
    if (!labels) return object;
    const metadata = object.metadata ?? {};
    return { ...object, metadata: { ...metadata, labels: { ...metadata.labels, ...labels } } };
  }

  /** Every request of this client, cut when its signal aborts, in a span when tracing is on. */
  private json<T>(request: KubeRequest, method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const signal = signalOf(this.options.scope);
    const answer = traced(request, method, (onStatus) => {
      const sent = onStatus ? { ...options, onStatus } : options;
      return this.transport.json<T>(method, path, signal ? { ...sent, signal } : sent);
    });
    return WRITES.has(request.verb) ? answer.then((object) => this.written(request, object)) : answer;
  }

  /** A controller's write returned this object: its watch event will be an echo (WriteEchoes). */
  private written<T>(request: KubeRequest, object: T): T {
    const controller = this.options.scope?.controller ?? currentRun()?.controller;
    const metadata = (object as KubeObject | undefined)?.metadata;
    if (controller && metadata?.resourceVersion && metadata.name) {
      const key = keyOf({ namespace: metadata.namespace, name: metadata.name });
      this.echoes.record(controller, resourceName(request.resource), key, metadata.resourceVersion);
    }
    return object;
  }

  /**
   * Changes metadata.finalizers with a JSON patch whose `test` guards the list itself, not
   * the resourceVersion: writes to other fields (a status update in a finalizer) do not
   * conflict, a concurrent change of the list does, and is retried on a fresh read.
   */
  private async updateFinalizers<T extends KubeObject>(
    object: T,
    change: (current: string[]) => string[] | undefined,
  ): Promise<T> {
    const resource = this.kinds.forObject(object) as ResourceDescriptor<T>;
    const ref = requireName(object);
    let current: T = object;
    for (let attempt = 1; ; attempt++) {
      const list = current.metadata?.finalizers;
      const next = change(list ?? []);
      if (!next) return current;
      try {
        if (!list) {
          // No list to test against: the resourceVersion guards against one added meanwhile.
          const body = { metadata: { finalizers: next, resourceVersion: current.metadata?.resourceVersion } };
          return await this.patch(resource, ref, body, 'merge');
        }
        const patch = [
          { op: 'test', path: '/metadata/finalizers', value: list },
          { op: 'replace', path: '/metadata/finalizers', value: next },
        ];
        return await this.patch(resource, ref, patch, 'json');
      } catch (error) {
        if (error instanceof KubeApiError && error.status === 404) return current; // gone: nothing left to change
        const stale = error instanceof KubeApiError && (error.status === 409 || error.status === 422);
        if (!stale || attempt >= 5) throw error;
        const fresh = await this.json<T>(
          { verb: 'get', resource, ...ref },
          'GET',
          resourcePath(resource, ref.namespace, ref.name),
        );
        current = withKind(fresh, resource);
      }
    }
  }
}

/** What cuts a client's requests: its scope's signal, else the signal of the run the caller belongs to. */
function signalOf(scope: ClientScope | undefined): AbortSignal | undefined {
  return scope ? scope.signal : currentRun()?.signal;
}

/** A controller owner reference to `owner`, as controllerutil.SetControllerReference sets it. */
export function controllerReference(owner: KubeObject): OwnerReference {
  const { name, uid } = owner.metadata ?? {};
  if (!owner.apiVersion || !owner.kind || !name || !uid) {
    throw new Error(
      'the owner needs apiVersion, kind, metadata.name and metadata.uid: pass the object as read from the API server',
    );
  }
  return { apiVersion: owner.apiVersion, kind: owner.kind, name, uid, controller: true, blockOwnerDeletion: true };
}

function withOwner<T extends KubeObject>(object: T, owner: KubeObject): T {
  const reference = controllerReference(owner);
  const others = (object.metadata?.ownerReferences ?? []).filter((r) => r.uid !== reference.uid && !r.controller);
  return { ...object, metadata: { ...object.metadata, ownerReferences: [...others, reference] } };
}

function requireName(object: KubeObject): ObjectRef & { name: string } {
  const { name, namespace } = object.metadata ?? {};
  if (!name) throw new Error(`the ${object.kind ?? 'object'} has no metadata.name: name it before writing it`);
  return namespace ? { namespace, name } : { name };
}

/** LIST responses carry apiVersion/kind on the list only; items get them back here. */
function withKind<T>(item: T, resource: ResourceDescriptor): T {
  const object = item as KubeObject;
  if (!object.kind) {
    object.apiVersion = apiVersionOf(resource);
    object.kind = resource.kind;
  }
  return item;
}
