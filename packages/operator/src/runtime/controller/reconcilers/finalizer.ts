import type { KubeObject, ResourceDescriptor } from '@nestor/core';
import type { KubeClient } from '../../../client/kube-client.js';
import type { ReconcileRequest, Reconciler } from '../reconciler.js';

/** What withFinalizer takes: the finalizer's name, the cleanup, and the reconcile of a live object. */
export interface FinalizerOptions<T extends KubeObject> {
  /** The finalizer's name on the object (see defaultFinalizerName). */
  name: string;
  /** Cleans up for an object being deleted; throw to retry. The finalizer is removed once it returns. */
  finalize(object: T, request: ReconcileRequest<T>): Promise<void> | void;
  /**
   * Unused: the finalizer list is written with the run's client (`request.client`).
   * @deprecated Every request carries its client now; leave this out.
   */
  client?: Pick<KubeClient, 'addFinalizer' | 'removeFinalizer'>;
  /** How long a finalized UID is remembered against a stale cache (default 60 s). */
  rememberMs?: number;
}

/** The finalizer name used when none is given: `<group>/finalizer`, `nestor.dev/finalizer` for core kinds. */
export function defaultFinalizerName(resource: ResourceDescriptor): string {
  return `${resource.group || 'nestor.dev'}/finalizer`;
}

/**
 * Adds finalizer handling around a reconciler, as controller-runtime's finalizer helper: the
 * finalizer is added before the first reconcile of a live object; once the object is being
 * deleted, `finalize` runs instead of the reconciler and the finalizer is removed when it
 * succeeds, so the API server can delete the object.
 */
export function withFinalizer<T extends KubeObject>(
  reconcile: Reconciler<T>,
  options: FinalizerOptions<T>,
): Reconciler<T> {
  const { name } = options;
  // UIDs whose finalizer this process just removed. The cache may still show the finalizer
  // for a moment, and a reconcile queued meanwhile must not run the cleanup again.
  const finalized = new RecentSet(options.rememberMs ?? 60_000);
  return async (request) => {
    const object = request.object;
    const client = request.client; // fenced and cut as the run's other writes
    if (!object) return reconcile(request);
    const finalizers = object.metadata?.finalizers ?? [];
    if (object.metadata?.deletionTimestamp) {
      const uid = object.metadata.uid ?? request.key;
      if (!finalizers.includes(name) || finalized.has(uid)) return; // cleaned up already, or never ours
      await options.finalize(object, request);
      await client.removeFinalizer(object, name);
      finalized.add(uid);
      return;
    }
    if (finalizers.includes(name)) return reconcile(request);
    return reconcile({ ...request, object: await client.addFinalizer(object, name) });
  };
}

/** A set whose entries expire after `ttlMs`; pruned on insert, oldest first, so it stays small. */
class RecentSet {
  private readonly expiries = new Map<string, number>();

  constructor(private readonly ttlMs: number) {}

  add(value: string): void {
    const now = Date.now();
    for (const [old, expiry] of this.expiries) {
      if (expiry > now) break; // insertion order is expiry order
      this.expiries.delete(old);
    }
    this.expiries.delete(value);
    this.expiries.set(value, now + this.ttlMs);
  }

  has(value: string): boolean {
    const expiry = this.expiries.get(value);
    return expiry !== undefined && expiry > Date.now();
  }
}
