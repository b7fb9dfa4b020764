import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { apiVersionOf, resourceName, type KubeObject, type ObjectRef, type ResourceDescriptor } from '@nestor/core';
import { apiError } from './api-errors.js';
import { applyMerge, asSent } from './patches.js';

// The fake's API server storage: objects by kind, namespace and name, and the bookkeeping
// the API server gives writes (resourceVersion, generation, conflicts, the status
// subresource, finalizers and deletionTimestamp, no-op writes, server-side apply's fields).

export type Stored = KubeObject & { metadata: NonNullable<KubeObject['metadata']> } & Record<string, unknown>;
export type Subresource = 'status' | undefined;

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

/** The objects of a FakeKubeClient and the rules of every write to them. */
export class ObjectStore {
  private readonly entries = new Map<string, { resource: ResourceDescriptor; object: Stored }>();
  /** What each field manager applied last, per object and subresource: the fields it owns. */
  private readonly applied = new Map<string, unknown>();
  private readonly wholeKinds = new Set<string>(NO_STATUS);
  private revision = 0;

  constructor(private readonly now: () => Date) {}

  /** A kind whose status is part of the object, not a subresource. */
  withoutStatusSubresource(resource: ResourceDescriptor): void {
    this.wholeKinds.add(resourceName(resource));
  }

  /** Puts an object in place as it is (no conflicts), filling in uid, resourceVersion and generation. */
  seed(resource: ResourceDescriptor, object: KubeObject): void {
    const copy = asSent(object) as Stored;
    copy.metadata ??= {};
    copy.apiVersion = apiVersionOf(resource);
    copy.kind = resource.kind;
    copy.metadata.uid ??= randomUUID();
    copy.metadata.creationTimestamp ??= this.timestamp();
    copy.metadata.resourceVersion = String(++this.revision);
    if (this.tracksGeneration(resource)) copy.metadata.generation ??= 1;
    this.entries.set(this.key(resource, copy.metadata), { resource, object: copy });
  }

  /** Copies of the stored objects, of one kind or all, sorted by namespace and name. */
  objects<T = KubeObject>(resource?: ResourceDescriptor<T>): T[] {
    return [...this.entries.values()]
      .filter((entry) => !resource || resourceName(entry.resource) === resourceName(resource))
      .map((entry) => structuredClone(entry.object) as T)
      .sort(byKey);
  }

  /** The stored object, not a copy: callers copy what they hand out. */
  find(resource: ResourceDescriptor, ref: { namespace?: string; name?: string }): Stored | undefined {
    return this.entries.get(this.key(resource, ref))?.object;
  }

  /** Stores a new object (409 if it exists), as a POST: server-owned metadata set, status dropped unless whole. */
  create<T extends KubeObject>(
    resource: ResourceDescriptor,
    object: T,
    metadata: NonNullable<KubeObject['metadata']>,
  ): T {
    if (!metadata.name)
      throw apiError(
        422,
        'Invalid',
        'metadata.name: Required value: name or generateName is required',
        'POST',
        resource,
      );
    if (resource.namespaced && !metadata.namespace) {
      throw apiError(422, 'Invalid', 'metadata.namespace: Required value', 'POST', resource);
    }
    const key = this.key(resource, metadata);
    if (this.entries.has(key)) {
      throw apiError(
        409,
        'AlreadyExists',
        `${resourceName(resource)} "${metadata.name}" already exists`,
        'POST',
        resource,
        metadata.name,
      );
    }
    const created = asSent({ ...object, metadata }) as Stored;
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
    this.entries.set(key, { resource, object: created });
    return structuredClone(created) as unknown as T;
  }

  /** Deletes the object, or with finalizers marks it deleted; false when there was none. */
  delete(resource: ResourceDescriptor, ref: ObjectRef): boolean {
    const key = this.key(resource, ref);
    const found = this.entries.get(key);
    if (!found) return false;
    const object = found.object;
    if (object.metadata.finalizers?.length) {
      if (!object.metadata.deletionTimestamp) {
        const next = structuredClone(object);
        next.metadata.deletionTimestamp = this.timestamp();
        next.metadata.resourceVersion = String(++this.revision);
        this.entries.set(key, { resource, object: next });
      }
      return true;
    }
    this.forget(key);
    return true;
  }

  /** Server-side apply of `body` by `manager`: create, or merge removing what it applied before and omits now. */
  apply(resource: ResourceDescriptor, body: Stored, manager: string, subresource: Subresource): KubeObject {
    if (!body.apiVersion || !body.kind)
      throw apiError(400, 'BadRequest', 'apply needs apiVersion and kind', 'PATCH', resource);
    const key = this.key(resource, body.metadata);
    const found = this.entries.get(key);
    // What the apply may set: on /status only the status; never the server's own fields.
    const fields = asSent(body) as Record<string, unknown> & { metadata: Record<string, unknown> };
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
        throw apiError(
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
      this.entries.set(key, { resource, object: created });
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
  commit(
    resource: ResourceDescriptor,
    current: Stored,
    next: Stored,
    subresource: Subresource,
    method: string,
  ): KubeObject {
    const whole = this.wholeKinds.has(resourceName(resource));
    if (subresource === 'status' && whole) {
      throw apiError(
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
        throw apiError(
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
    this.entries.set(key, { resource, object: candidate });
    return structuredClone(candidate);
  }

  private forget(key: string): void {
    this.entries.delete(key);
    for (const slot of this.applied.keys()) if (slot.startsWith(`${key}|`)) this.applied.delete(slot);
  }

  existing(resource: ResourceDescriptor, ref: ObjectRef, method: string): Stored {
    const found = this.entries.get(this.key(resource, ref));
    if (!found)
      throw apiError(404, 'NotFound', `${resourceName(resource)} "${ref.name}" not found`, method, resource, ref.name);
    return found.object;
  }

  checkPrecondition(resource: ResourceDescriptor, current: Stored, asked: unknown, method: string): void {
    if (asked === undefined || asked === null || asked === '' || asked === current.metadata.resourceVersion) return;
    throw apiError(
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

  timestamp(): string {
    return this.now()
      .toISOString()
      .replace(/\.\d+Z$/, 'Z');
  }
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
