import type { LoggerService } from '@nestjs/common';
import type { ObjectRef } from '@nestor/core';
import type { KubeClient } from '../client/kube-client.js';

/** What a @Reconcile() method gets beside the object. */
export interface ReconcileContext {
  /** The request: `{ namespace, name }`. */
  readonly request: ObjectRef;
  /** Its queue key, `namespace/name`. */
  readonly key: string;
  /** Aborted on the reconcile timeout and when shutdown's grace period ends: pass it to I/O. */
  readonly signal: AbortSignal;
  /** 1 for the first try, n for the n-th retry in a row after errors. */
  readonly attempt: number;
  /** Unique per run, in every log line of it. */
  readonly reconcileId: string;
  /**
   * The operator's client for this run: writes fenced by this controller's Lease, requests
   * cut by `signal`, Events reported by this controller. The injected KubeClient does the
   * same from the ambient context; this one needs none.
   */
  readonly client: KubeClient;
  /**
   * The cluster the object is in, which `client` reads and writes: 'default' for the
   * operator's own; a member cluster's name for a controller with `clusters` set.
   */
  readonly cluster: string;
  /** Nest logger bound to the controller, the object and the reconcile ID. */
  readonly log: Pick<LoggerService, 'log' | 'warn' | 'error' | 'debug'>;
}
