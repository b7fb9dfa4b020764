import type { ObjectRef, RuntimeLogger } from '@nestor/core';
import type { KubeClient } from '../../client/kube-client.js';
import type { ReconcileResult } from './result.js';

/** Everything one reconcile gets: the request, the cached object, a bound logger, a signal. */
export interface ReconcileRequest<T> {
  /** The object's reference: `{ namespace, name }`. */
  readonly ref: ObjectRef;
  /** Its queue key, `namespace/name`. */
  readonly key: string;
  /** The current object from the cache; undefined only for controllers without a primary kind. */
  readonly object: T | undefined;
  /** Aborted on the reconcile timeout and on shutdown past the grace period. */
  readonly signal: AbortSignal;
  /** 1 for the first try, n for the n-th retry in a row after errors. */
  readonly attempt: number;
  /** Unique per run: ties the logs and spans of one reconcile together. */
  readonly reconcileId: string;
  /** A logger bound to controller, namespace, name and reconcile ID. */
  readonly log: RuntimeLogger;
  /**
   * THE client to write with in this run: the manager's, its writes fenced by this
   * controller's Lease, its requests cut by `signal`, its Events reported by this
   * controller, all explicit (no ambient context read), even from a promise left running.
   */
  readonly client: KubeClient;
  /**
   * The cluster the object is in, and that `client` reads and writes: 'default' for the
   * manager's own; a member's name for a controller that runs in a fleet's clusters.
   */
  readonly cluster: string;
}

/**
 * Brings one object to its desired state. Level-based: it gets the current object, never
 * the event. Wrappers (withFinalizer) compose around it; the loop that runs it makes its span.
 */
export type Reconciler<T> = (request: ReconcileRequest<T>) => Promise<ReconcileResult | void> | ReconcileResult | void;
