// An in-memory stand-in for KubeClient, for unit tests of reconcilers without an API server:
// what controller-runtime's fake client is used for. It keeps objects in a map and gives
// writes the API server's bookkeeping (resourceVersion, generation, conflicts, the status
// subresource, finalizers and deletionTimestamp, no-op writes that change nothing); it
// does not admit, validate, default, garbage-collect or run any controller. Anything that
// depends on those belongs in an e2e test against TestEnvironment.
import { randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  apiVersionOf,
  DEFAULT_FIELD_MANAGER,
  KubeApiError,
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
  type ListOptions,
  type PatchType,
} from '../client/kube-client.js';
import { resourceOf, type ResourceType } from '../crd/custom-resource.decorator.js';
import { applyMerge, isObject, jsonPatch, JsonPatchError, mergePatch, type Json } from './patches.js';
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

type Stored = KubeObject & { metadata: NonNullable<KubeObject['metadata']> } & Record<string, unknown>;
type Subresource = 'status' | undefined;

/** Built-in kinds without a status subresource: their writes are whole. */
const NO_STATUS = new Set([
  'configmaps',
  'secrets',
  'serviceaccounts',
  'events',
  'events.events.k8s.io',
  'leases.coordination.k8s.io',
  'roles.rbac.authorization.k8s.io',
  'rolebindings.rbac.authorization.k8s.io',
  'clusterroles.rbac.authorization.k8s.io',
  'clusterrolebindings.rbac.authorization.k8s.io',
]);

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

  private readonly store = new Map<string, { resource: ResourceDescriptor; object: Stored }>();
  /** What each field manager applied last, per object and subresource: the fields it owns. */
  private readonly applied = new Map<string, unknown>();
  private readonly interceptors: Array<(action: FakeAction) => void | Promise<void>> = [];
  private readonly wholeKinds = new Set<string>(NO_STATUS);
  private readonly now: () => Date;
  private revision = 0;

  constructor(options: FakeKubeClientOptions = {}) {
    super();
    this.fieldManager = options.fieldManager ?? DEFAULT_FIELD_MANAGER;
    this.now = options.now ?? (() => new Date());
    for (const kind of options.kinds ?? []) this.kinds.register(resourceOf(kind));
    for (const kind of options.withoutStatusSubresource ?? []) {
      const resource = resourceOf(kind);
      this.kinds.register(resource);
      this.wholeKinds.add(resourceName(resource));
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
    for (const object of objects) {
      const resource = this.kinds.forObject(object);
      const copy = structuredClone(object) as Stored;
      copy.metadata ??= {};
      copy.apiVersion = apiVersionOf(resource);
      copy.kind = resource.kind;
      copy.metadata.uid ??= randomUUID();
      copy.metadata.creationTimestamp ??= this.timestamp();
      copy.metadata.resourceVersion = String(++this.revision);
      if (this.tracksGeneration(resource)) copy.metadata.generation ??= 1;
      this.store.set(this.key(resource, copy.metadata), { resource, object: copy });
    }
  }

  /** Copies of the stored objects, of one kind or all, sorted by namespace and name. */
  objects<T = KubeObject>(resource?: ResourceDescriptor<T>): T[] {
    return [...this.store.values()]
      .filter((entry) => !resource || resourceName(entry.resource) === resourceName(resource))
      .map((entry) => structuredClone(entry.object) as T)
      .sort(byKey);
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
    const found = this.store.get(this.key(resource, ref));
    return found ? (structuredClone(found.object) as T) : undefined;
  }

  override async list<T>(resource: ResourceDescriptor<T>, options: ListOptions = {}): Promise<T[]> {
    const namespace = resource.namespaced ? options.namespace : undefined;
    await this.act({ verb: 'list', resource: resourceName(resource), ...(namespace ? { namespace } : {}) });
    let labels: (object: KubeObject) => boolean;
    try {
      labels = options.labelSelector ? labelSelector(options.labelSelector) : () => true;
    } catch (error) {
      throw this.error(400, 'BadRequest', (error as Error).message, 'GET', resource);
    }
    const fields = options.fieldSelector ? fieldSelector(options.fieldSelector) : () => true;
    return this.objects(resource).filter(
      (o) =>
        (!namespace || (o as KubeObject).metadata?.namespace === namespace) &&
        labels(o as KubeObject) &&
        fields(o as KubeObject),
    );
  }

  override async create<T extends KubeObject>(object: T, resource = this.kinds.forObject(object)): Promise<T> {
    const metadata: NonNullable<KubeObject['metadata']> & { generateName?: string } = { ...object.metadata };
    if (!metadata.name && metadata.generateName)
      metadata.name = metadata.generateName + randomBytes(4).toString('hex').slice(0, 5);
    await this.act({ verb: 'create', resource: resourceName(resource), ...refOf(resource, metadata) });
    if (!metadata.name)
      throw this.error(
        422,
        'Invalid',
        'metadata.name: Required value: name or generateName is required',
        'POST',
        resource,
      );
    if (resource.namespaced && !metadata.namespace) {
      throw this.error(422, 'Invalid', 'metadata.namespace: Required value', 'POST', resource);
    }
    const key = this.key(resource, metadata);
    if (this.store.has(key)) {
      throw this.error(
        409,
        'AlreadyExists',
        `${resourceName(resource)} "${metadata.name}" already exists`,
        'POST',
        resource,
        metadata.name,
      );
    }
    const created = structuredClone({ ...object, metadata }) as Stored;
    created.apiVersion = apiVersionOf(resource);
    created.kind = resource.kind;
    if (!this.wholeKinds.has(resourceName(resource))) delete created.status; // status is written through /status
    delete created.metadata.deletionTimestamp;
    created.metadata.uid = randomUUID();
    created.metadata.creationTimestamp = this.timestamp();
    created.metadata.resourceVersion = String(++this.revision);
    delete created.metadata.managedFields;
    if (this.tracksGeneration(resource)) created.metadata.generation = 1;
    else delete created.metadata.generation;
    this.store.set(key, { resource, object: created });
    return structuredClone(created) as unknown as T;
  }

  override async replace<T extends KubeObject>(object: T, resource = this.kinds.forObject(object)): Promise<T> {
    const ref = requireRef(object);
    await this.act({ verb: 'update', resource: resourceName(resource), ...refOf(resource, ref) });
    const current = this.existing(resource, ref, 'PUT');
    this.checkPrecondition(resource, current, object.metadata?.resourceVersion, 'PUT');
    return this.commit(resource, current, structuredClone(object) as Stored, undefined, 'PUT') as unknown as T;
  }

  override async delete(resource: ResourceDescriptor, ref: ObjectRef, _options: DeleteOptions = {}): Promise<boolean> {
    await this.act({ verb: 'delete', resource: resourceName(resource), ...refOf(resource, ref) });
    const key = this.key(resource, ref);
    const found = this.store.get(key);
    if (!found) return false;
    const object = found.object;
    if (object.metadata.finalizers?.length) {
      if (!object.metadata.deletionTimestamp) {
        const next = structuredClone(object);
        next.metadata.deletionTimestamp = this.timestamp();
        next.metadata.resourceVersion = String(++this.revision);
        this.store.set(key, { resource, object: next });
      }
      return true;
    }
    this.forget(key);
    return true;
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
    const current = this.existing(resource, ref, 'PATCH');
    let next: Json;
    if (type === 'json') {
      try {
        next = jsonPatch(current, patch);
      } catch (error) {
        if (!(error instanceof JsonPatchError)) throw error;
        throw this.error(
          error.failedTest ? 422 : 400,
          error.failedTest ? 'Invalid' : 'BadRequest',
          error.message,
          'PATCH',
          resource,
          ref.name,
        );
      }
      this.checkPrecondition(resource, current, (next as Stored).metadata?.resourceVersion, 'PATCH');
    } else {
      // A resourceVersion in a merge patch is a precondition, as on the API server.
      const asked = isObject(patch) && isObject(patch.metadata) ? patch.metadata.resourceVersion : undefined;
      this.checkPrecondition(resource, current, typeof asked === 'string' ? asked : undefined, 'PATCH');
      next = mergePatch(current, patch);
    }
    return this.commit(resource, current, next as Stored, subresource, 'PATCH') as unknown as T;
  }

  override async apply<T extends KubeObject>(object: T, options: ApplyOptions = {}): Promise<T> {
    const resource = this.kinds.forObject(object);
    const ref = requireRef(object);
    await this.act({ verb: 'apply', resource: resourceName(resource), ...refOf(resource, ref) });
    let body = structuredClone(object) as Stored;
    if (options.owner) {
      const owner = controllerReference(options.owner);
      const others = (body.metadata.ownerReferences ?? []).filter((r) => r.uid !== owner.uid && !r.controller);
      body = { ...body, metadata: { ...body.metadata, ownerReferences: [...others, owner] } };
    }
    return this.applyTo(resource, body, options.fieldManager ?? this.fieldManager, undefined) as unknown as T;
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
    return this.applyTo(resource, body, this.fieldManager, 'status') as unknown as T;
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
      at: this.timestamp(),
    });
  }

  // ---- the API server's bookkeeping

  private async act(action: FakeAction): Promise<void> {
    this.actions.push(action);
    for (const interceptor of [...this.interceptors]) await interceptor(action);
  }

  private applyTo(resource: ResourceDescriptor, body: Stored, manager: string, subresource: Subresource): KubeObject {
    if (!body.apiVersion || !body.kind)
      throw this.error(400, 'BadRequest', 'apply needs apiVersion and kind', 'PATCH', resource);
    const key = this.key(resource, body.metadata);
    const found = this.store.get(key);
    // What the apply may set: on /status only the status; never the server's own fields.
    const fields = structuredClone(body) as Record<string, unknown> & { metadata: Record<string, unknown> };
    for (const field of [
      'resourceVersion',
      'uid',
      'generation',
      'creationTimestamp',
      'deletionTimestamp',
      'managedFields',
    ]) {
      delete fields.metadata[field];
    }
    if (!found) {
      if (subresource)
        throw this.error(
          404,
          'NotFound',
          `${resourceName(resource)} "${body.metadata.name}" not found`,
          'PATCH',
          resource,
          body.metadata.name,
        );
      this.applied.set(`${key}|${manager}|main`, fields);
      const created = structuredClone(fields) as Stored;
      created.metadata.uid = randomUUID();
      created.metadata.creationTimestamp = this.timestamp();
      created.metadata.resourceVersion = String(++this.revision);
      if (!this.wholeKinds.has(resourceName(resource))) delete created.status;
      if (this.tracksGeneration(resource)) created.metadata.generation = 1;
      this.store.set(key, { resource, object: created });
      return structuredClone(created);
    }
    this.checkPrecondition(resource, found.object, body.metadata.resourceVersion, 'PATCH');
    const slot = `${key}|${manager}|${subresource ?? 'main'}`;
    const next = applyMerge(found.object, fields, this.applied.get(slot)) as Stored;
    const result = this.commit(resource, found.object, next, subresource, 'PATCH');
    this.applied.set(slot, fields);
    return result;
  }

  /**
   * Stores `next` in place of `current` as the API server would: the status subresource
   * rule, server-owned metadata kept, no new finalizers on an object being deleted, the
   * generation bumped on a change outside metadata and status, a new resourceVersion only
   * when something changed, and the object gone once its last finalizer is.
   */
  private commit(
    resource: ResourceDescriptor,
    current: Stored,
    next: Stored,
    subresource: Subresource,
    method: string,
  ): KubeObject {
    const whole = this.wholeKinds.has(resourceName(resource));
    if (subresource === 'status' && whole) {
      throw this.error(
        404,
        'NotFound',
        `${resourceName(resource)} has no status subresource`,
        method,
        resource,
        current.metadata.name,
      );
    }
    let candidate: Stored;
    if (subresource === 'status') {
      candidate = structuredClone(current);
      if (next.status === undefined) delete candidate.status;
      else candidate.status = next.status;
    } else {
      candidate = structuredClone(next);
      candidate.metadata = { ...candidate.metadata };
      if (!whole) {
        if (current.status === undefined) delete candidate.status;
        else candidate.status = structuredClone(current.status);
      }
      const added = (candidate.metadata.finalizers ?? []).filter(
        (f) => !(current.metadata.finalizers ?? []).includes(f),
      );
      if (current.metadata.deletionTimestamp && added.length) {
        throw this.error(
          422,
          'Invalid',
          `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
          method,
          resource,
          current.metadata.name,
        );
      }
    }
    candidate.apiVersion = apiVersionOf(resource);
    candidate.kind = resource.kind;
    const keep = [
      'name',
      'namespace',
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'generation',
      'resourceVersion',
    ] as const;
    for (const field of keep) {
      if (current.metadata[field] === undefined) delete candidate.metadata[field];
      else (candidate.metadata as Record<string, unknown>)[field] = current.metadata[field];
    }
    delete candidate.metadata.managedFields;
    if (!candidate.metadata.finalizers?.length) delete candidate.metadata.finalizers;
    if (isDeepStrictEqual(candidate, current)) return structuredClone(current); // a no-op write: no new version, no event

    if (
      this.tracksGeneration(resource) &&
      !isDeepStrictEqual(withoutMetaAndStatus(candidate), withoutMetaAndStatus(current))
    ) {
      candidate.metadata.generation = (current.metadata.generation ?? 0) + 1;
    }
    candidate.metadata.resourceVersion = String(++this.revision);
    const key = this.key(resource, current.metadata);
    if (candidate.metadata.deletionTimestamp && !candidate.metadata.finalizers?.length) {
      this.forget(key);
      return structuredClone(candidate);
    }
    this.store.set(key, { resource, object: candidate });
    return structuredClone(candidate);
  }

  private async changeFinalizers<T extends KubeObject>(
    object: T,
    change: (list: string[]) => string[] | undefined,
  ): Promise<T> {
    const resource = this.kinds.forObject(object) as ResourceDescriptor<T>;
    const ref = requireRef(object);
    const current = this.store.get(this.key(resource, ref));
    if (!current) return object; // gone: nothing left to change, as the real client
    const next = change(current.object.metadata.finalizers ?? []);
    if (!next) return structuredClone(current.object) as unknown as T;
    return this.patch(resource, ref, { metadata: { finalizers: next } }, 'merge');
  }

  private forget(key: string): void {
    this.store.delete(key);
    for (const slot of this.applied.keys()) if (slot.startsWith(`${key}|`)) this.applied.delete(slot);
  }

  private existing(resource: ResourceDescriptor, ref: ObjectRef, method: string): Stored {
    const found = this.store.get(this.key(resource, ref));
    if (!found)
      throw this.error(
        404,
        'NotFound',
        `${resourceName(resource)} "${ref.name}" not found`,
        method,
        resource,
        ref.name,
      );
    return found.object;
  }

  private checkPrecondition(resource: ResourceDescriptor, current: Stored, asked: unknown, method: string): void {
    if (asked === undefined || asked === null || asked === '' || asked === current.metadata.resourceVersion) return;
    throw this.error(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${resourceName(resource)} "${current.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      method,
      resource,
      current.metadata.name,
    );
  }

  /** Kinds with a status subresource carry metadata.generation (ConfigMaps and the like do not). */
  private tracksGeneration(resource: ResourceDescriptor): boolean {
    return !this.wholeKinds.has(resourceName(resource));
  }

  private key(resource: ResourceDescriptor, ref: { namespace?: string; name?: string }): string {
    return `${resourceName(resource)}|${resource.namespaced ? (ref.namespace ?? '') : ''}|${ref.name ?? ''}`;
  }

  private timestamp(): string {
    return this.now()
      .toISOString()
      .replace(/\.\d+Z$/, 'Z');
  }

  private error(
    status: number,
    reason: string,
    detail: string,
    method: string,
    resource: ResourceDescriptor,
    name?: string,
  ): KubeApiError {
    const statusObject = { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: detail, reason, code: status };
    const path = `(fake) ${resourceName(resource)}${name ? `/${name}` : ''}`;
    return new KubeApiError(status, reason, detail, method, path, { statusObject });
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

function withoutMetaAndStatus(object: Stored): Record<string, unknown> {
  const { metadata: _metadata, status: _status, ...rest } = object;
  return rest;
}

function byKey(a: unknown, b: unknown): number {
  const key = (o: unknown) =>
    `${(o as KubeObject).metadata?.namespace ?? ''}/${(o as KubeObject).metadata?.name ?? ''}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}
