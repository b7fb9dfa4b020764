import { SetMetadata } from '@nestjs/common';
import { OPERATOR_RECONCILE_METADATA } from '../operator.constants.js';

/**
 * Marks the method that brings one object to its desired state:
 * `(object, ctx: ReconcileContext) => ReconcileResult | void`. Return nothing when done,
 * `{ requeueAfter: ms }` to run again later; throw to retry with backoff, or throw a
 * TerminalError to stop retrying.
 */
export function Reconcile(): MethodDecorator {
  return SetMetadata(OPERATOR_RECONCILE_METADATA, true);
}
