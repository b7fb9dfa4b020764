// An in-memory stand-in for KubeClient, for unit tests of reconcilers without an API server:
// what controller-runtime's fake client is used for. It keeps objects in a map and gives
// writes the API server's bookkeeping (resourceVersion, generation, conflicts, the status
// subresource, finalizers and deletionTimestamp, no-op writes that change nothing); it
// does not admit, validate, default, garbage-collect or run any controller. Anything that
// depends on those belongs in an e2e test against TestEnvironment.
import { randomBytes } from 'node:crypto';
import {
  DEFAULT_FIELD_MANAGER,
  resourceName,
  type KubeObject,
  type ObjectRef,
  type ResourceDescriptor,
} from '@nestor/core';
import { controllerReference } from '../client/http-kube-client.js';
import { KindRegistry } from '../client/kind-registry.js';
import {
  KubeClient,
  type ApplyOptions,
  type DeleteOptions,
  type EventType,
  indexOfList,
  type ListOptions,
  type PatchType,
} from '../client/kube-client.js';
import { resourceOf, type ResourceType } from '../crd/custom-resource.decorator.js';
import { fieldIndexFunc, type FieldIndexer } from '../runtime/cache/field-index.js';
import { apiError } from './api-errors.js';
import { ObjectStore, type Stored } from './object-store.js';
import { asSent, isObject, jsonPatch, JsonPatchError, mergePatch, type Json } from './patches.js';
import { fieldSelector, labelSelector } from './selectors.js';

export interface FakeKubeClientOptions {
  /** Objects present from the start (their kinds must be built-in or listed in `kinds`). */
  objects?: KubeObject[];
  /** Custom resources (@CustomResource classes or descriptors) the client will meet. */
  kinds?: ResourceType[];
  /**
   * Kinds whose status is part of the object rather than a subresource. Built-in kinds
   * without status (ConfigMap, Secret, RBAC, ...) are known; custom resources are assumed
   * to have `subresources: { status: {} }`, as kubebuilder's do.
   */
  withoutStatusSubresource?: ResourceType[];
  /** Field manager of applies (default 'nestor', as the real client). */
  fieldManager?: string;
  /** The clock of creationTimestamp, deletionTimestamp and events (default: now). */
  now?: () => Date;
}

/** One call of the client, in order: what a test asserts when it checks what was written. */
export interface FakeAction {
  verb: 'get' | 'list' | 'create' | 'update' | 'patch' | 'apply' | 'delete' | 'event';
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: 'status' | 'scale';
  patchType?: 'merge' | 'json' | 'strategic';
}

/** An Event recorded with `recordEvent`. */
export interface RecordedEvent {
  type: EventType;
  reason: string;
  message: string;
  object: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string };
  at: string;
}

/**
 * A KubeClient whose API server is a map in memory. It implements KubeClient as the real
 * client (HttpKubeClient) does, with no transport behind it, so `new MyController(fake)` and
 * `Test.createTestingModule(...).overrideProvider(KubeClient).useValue(fake)` work.
 *
 * Modelled: get/list (namespace, label selectors, metadata.name/namespace field
 * selectors), create (generateName, uid, 409 AlreadyExists), replace (409 on a stale
 * resourceVersion), delete (finalizers hold the object with a deletionTimestamp; removing
 * the last one deletes it), merge, JSON and strategic (as merge) patches with their
 * preconditions, server-side apply (create or merge; fields this manager applied before
 * and omits now are removed), the status subresource (main writes keep status, status
 * writes change only status), generation bumps on changes outside metadata and status,
 * no resourceVersion bump for a write that changes nothing, events into `recordedEvents`.
 *
 * Not modelled: admission and webhooks, OpenAPI validation, defaulting and pruning, garbage
 * collection of owned objects (deleting an owner leaves its Deployment), namespace
 * lifecycle, field ownership between managers (managedFields, apply conflicts), watches and
 * informers (reads see every write at once, never a stale cache).
 */
export class FakeKubeClient extends KubeClient {
  readonly fieldManager: string;
  readonly kinds = new KindRegistry();
  /** Events recorded with recordEvent, oldest first. */
  readonly recordedEvents: RecordedEvent[] = [];
  /** Every call, oldest first. */
  readonly actions: FakeAction[] = [];

  private readonly store: ObjectStore;
  /** Field indexes by kind (`resourceName`), then name. */
  private readonly fieldIndexes = new Map<string, Map<string, FieldIndexer<KubeObject>>>();
  private readonly interceptors: Array<(action: FakeAction) => void | Promise<void>> = [];

  constructor(options: FakeKubeClientOptions = {}) {
    super();
    this.fieldManager = options.fieldManager ?? DEFAULT_FIELD_MANAGER;
    this.store = new ObjectStore(options.now ?? (() => new Date()));
    for (const kind of options.kinds ?? []) this.kinds.register(resourceOf(kind));
    for (const kind of options.withoutStatusSubresource ?? []) {
      const resource = resourceOf(kind);
      this.kinds.register(resource);
      this.store.withoutStatusSubresource(resource);
    }
    for (const object of options.objects ?? []) this.seed(object);
  }

  /**
   * Runs before every call with what it is about to do; throw (a KubeApiError, say) to make
   * that call fail, as controller-runtime's interceptors do. Returns the removal.
   */
  intercept(interceptor: (action: FakeAction) => void | Promise<void>): () => void {
    this.interceptors.push(interceptor);
    return () => this.interceptors.splice(this.interceptors.indexOf(interceptor), 1);
  }

  /** Puts objects in place as they are (no interceptors, no conflicts), filling in uid, resourceVersion and generation. */
  seed(...objects: KubeObject[]): void {
    for (const object of objects) this.store.seed(this.kinds.forObject(object), object);
  }

  /** Copies of the stored objects, of one kind or all, sorted by namespace and name. */
  objects<T = KubeObject>(resource?: ResourceDescriptor<T>): T[] {
    return this.store.objects(resource);
  }

  /** This fake itself: one in-memory store whoever writes, and no requests to cut. */
  override scoped(): KubeClient {
    return this;
  }

  /** The calls that wrote something (not get or list). */
  get writes(): FakeAction[] {
    return this.actions.filter((a) => a.verb !== 'get' && a.verb !== 'list');
  }

  override async get<T>(resource: ResourceDescriptor<T>, ref: ObjectRef): Promise<T | undefined> {
    await this.act({ verb: 'get', resource: resourceName(resource), ...refOf(resource, ref) });
    const found = this.store.find(resource, ref);
    return found ? (structuredClone(found) as T) : undefined;
  }

  /**
   * Declares field index `name` on the kind, as `indexes` on a controller or
   * `manager.indexField` do, so that `list(kind, { index: { [name]: value } })` answers.
   */
  indexField<T>(resource: ResourceDescriptor<T>, name: string, indexer: FieldIndexer<T>): this {
    const kind = resourceName(resource);
    const indexes = this.fieldIndexes.get(kind) ?? new Map<string, FieldIndexer<KubeObject>>();
    indexes.set(name, indexer as FieldIndexer<KubeObject>);
    this.fieldIndexes.set(kind, indexes);
    return this;
  }

  override async list<T>(resource: ResourceDescriptor<T>, options: ListOptions = {}): Promise<T[]> {
    const namespace = resource.namespaced ? options.namespace : undefined;
    const index = indexOfList(resource, options);
    await this.act({ verb: 'list', resource: resourceName(resource), ...(namespace ? { namespace } : {}) });
    if (index) return this.byField(resource, index[0], index[1], namespace);
    let labels: (object: KubeObject) => boolean;
    try {
      labels = options.labelSelector ? labelSelector(options.labelSelector) : () => true;
    } catch (error) {
      throw apiError(400, 'BadRequest', (error as Error).message, 'GET', resource);
    }
    const fields = options.fieldSelector ? fieldSelector(options.fieldSelector) : () => true;
    return this.objects(resource).filter(
      (o) =>
        (!namespace || (o as KubeObject).metadata?.namespace === namespace) &&
        labels(o as KubeObject) &&
        fields(o as KubeObject),
    );
  }

  private byField<T>(resource: ResourceDescriptor<T>, name: string, value: string, namespace?: string): T[] {
    const indexer = this.fieldIndexes.get(resourceName(resource))?.get(name);
    if (!indexer) {
      throw new Error(
        `${resourceName(resource)} has no field index named "${name}": declare it on the fake (fake.indexField) as the controller declares it`,
      );
    }
    const filed = (object: KubeObject) => {
      const values = fieldIndexFunc(indexer, () => {})(object);
      return values.includes(value);
    };
    return this.objects(resource).filter(
      (o) => (!namespace || (o as KubeObject).metadata?.namespace === namespace) && filed(o as KubeObject),
    );
  }

  override async create<T extends KubeObject>(object: T, resource = this.kinds.forObject(object)): Promise<T> {
    const metadata: NonNullable<KubeObject['metadata']> & { generateName?: string } = { ...object.metadata };
    if (!metadata.name && metadata.generateName)
      metadata.name = metadata.generateName + randomBytes(4).toString('hex').slice(0, 5);
    await this.act({ verb: 'create', resource: resourceName(resource), ...refOf(resource, metadata) });
    return this.store.create(resource, object, metadata);
  }

  override async replace<T extends KubeObject>(object: T, resource = this.kinds.forObject(object)): Promise<T> {
    const ref = requireRef(object);
    await this.act({ verb: 'update', resource: resourceName(resource), ...refOf(resource, ref) });
    const current = this.store.existing(resource, ref, 'PUT');
    this.store.checkPrecondition(resource, current, object.metadata?.resourceVersion, 'PUT');
    return this.store.commit(resource, current, asSent(object) as Stored, undefined, 'PUT') as unknown as T;
  }

  override async delete(resource: ResourceDescriptor, ref: ObjectRef, _options: DeleteOptions = {}): Promise<boolean> {
    await this.act({ verb: 'delete', resource: resourceName(resource), ...refOf(resource, ref) });
    return this.store.delete(resource, ref);
  }

  override async patch<T>(
    resource: ResourceDescriptor<T>,
    ref: ObjectRef,
    patch: unknown,
    type: PatchType = 'merge',
    subresource?: 'status' | 'scale',
  ): Promise<T> {
    const action: FakeAction = {
      verb: 'patch',
      resource: resourceName(resource),
      ...refOf(resource, ref),
      patchType: type,
    };
    await this.act(subresource ? { ...action, subresource } : action);
    if (subresource === 'scale')
      throw new Error('FakeKubeClient does not model the scale subresource: patch spec.replicas instead');
    const current = this.store.existing(resource, ref, 'PATCH');
    const sent = asSent(patch); // a Date in it arrives as its string
    let next: Json;
    if (type === 'json') {
      try {
        next = jsonPatch(current, sent);
      } catch (error) {
        if (!(error instanceof JsonPatchError)) throw error;
        throw apiError(
          error.failedTest ? 422 : 400,
          error.failedTest ? 'Invalid' : 'BadRequest',
          error.message,
          'PATCH',
          resource,
          ref.name,
        );
      }
      this.store.checkPrecondition(resource, current, (next as Stored).metadata?.resourceVersion, 'PATCH');
    } else {
      // A resourceVersion in a merge patch is a precondition, as on the API server.
      const asked = isObject(sent) && isObject(sent.metadata) ? sent.metadata.resourceVersion : undefined;
      this.store.checkPrecondition(resource, current, typeof asked === 'string' ? asked : undefined, 'PATCH');
      next = mergePatch(current, sent);
    }
    return this.store.commit(resource, current, next as Stored, subresource, 'PATCH') as unknown as T;
  }

  override async apply<T extends KubeObject>(object: T, options: ApplyOptions = {}): Promise<T> {
    const resource = this.kinds.forObject(object);
    const ref = requireRef(object);
    await this.act({ verb: 'apply', resource: resourceName(resource), ...refOf(resource, ref) });
    let body = asSent(object) as Stored;
    if (options.owner) {
      const owner = controllerReference(options.owner);
      const others = (body.metadata.ownerReferences ?? []).filter((r) => r.uid !== owner.uid && !r.controller);
      body = { ...body, metadata: { ...body.metadata, ownerReferences: [...others, owner] } };
    }
    return this.store.apply(resource, body, options.fieldManager ?? this.fieldManager, undefined) as unknown as T;
  }

  override async patchStatus<T extends KubeObject>(object: T, status: Record<string, unknown> | object): Promise<T> {
    const resource = this.kinds.forObject(object) as ResourceDescriptor<T>;
    return this.patch(resource, requireRef(object), { status }, 'merge', 'status');
  }

  override async applyStatus<T extends KubeObject>(object: T, status: Record<string, unknown> | object): Promise<T> {
    const resource = this.kinds.forObject(object);
    const ref = requireRef(object);
    await this.act({ verb: 'apply', resource: resourceName(resource), ...refOf(resource, ref), subresource: 'status' });
    const body = { apiVersion: object.apiVersion, kind: object.kind, metadata: { ...ref }, status } as Stored;
    return this.store.apply(resource, body, this.fieldManager, 'status') as unknown as T;
  }

  override async addFinalizer<T extends KubeObject>(object: T, finalizer: string): Promise<T> {
    return this.changeFinalizers(object, (list) => (list.includes(finalizer) ? undefined : [...list, finalizer]));
  }

  override async removeFinalizer<T extends KubeObject>(object: T, finalizer: string): Promise<T> {
    return this.changeFinalizers(object, (list) =>
      list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined,
    );
  }

  /** Conflicts in memory are retried at once: there is no API server to spare. */
  protected override conflictBackoffMs(): number {
    return 0;
  }

  override async recordEvent(object: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const { name, namespace, uid } = object.metadata ?? {};
    await this.act({
      verb: 'event',
      resource: 'events',
      ...(namespace ? { namespace } : {}),
      ...(name ? { name } : {}),
    });
    this.recordedEvents.push({
      type,
      reason,
      message: message.slice(0, 1024),
      object: { apiVersion: object.apiVersion, kind: object.kind, name, namespace, uid },
      at: this.store.timestamp(),
    });
  }

  // ---- what every call does first, and finalizer changes as patches

  private async act(action: FakeAction): Promise<void> {
    this.actions.push(action);
    for (const interceptor of [...this.interceptors]) await interceptor(action);
  }

  private async changeFinalizers<T extends KubeObject>(
    object: T,
    change: (list: string[]) => string[] | undefined,
  ): Promise<T> {
    const resource = this.kinds.forObject(object) as ResourceDescriptor<T>;
    const ref = requireRef(object);
    const current = this.store.find(resource, ref);
    if (!current) return object; // gone: nothing left to change, as the real client
    const next = change(current.metadata.finalizers ?? []);
    if (!next) return structuredClone(current) as unknown as T;
    return this.patch(resource, ref, { metadata: { finalizers: next } }, 'merge');
  }
}

/** A FakeKubeClient (the same as `new FakeKubeClient(options)`). */
export function fakeKubeClient(options: FakeKubeClientOptions = {}): FakeKubeClient {
  return new FakeKubeClient(options);
}

function requireRef(object: KubeObject): ObjectRef & { name: string } {
  const { name, namespace } = object.metadata ?? {};
  if (!name) throw new Error(`the ${object.kind ?? 'object'} has no metadata.name: name it before writing it`);
  return namespace ? { namespace, name } : { name };
}

function refOf(
  resource: ResourceDescriptor,
  ref: { namespace?: string; name?: string },
): { namespace?: string; name?: string } {
  return {
    ...(resource.namespaced && ref.namespace ? { namespace: ref.namespace } : {}),
    ...(ref.name ? { name: ref.name } : {}),
  };
}
