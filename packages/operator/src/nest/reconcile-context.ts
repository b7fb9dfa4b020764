import type { LoggerService } from '@nestjs/common';
import type { ObjectRef } from '@nestor/core';

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
  /** Nest logger bound to the controller, the object and the reconcile ID. */
  readonly log: Pick<LoggerService, 'log' | 'warn' | 'error' | 'debug'>;
}
