import { LeaseLostError } from '../leases/leader-election.js';

/**
 * Whether a run ended because this replica may no longer write: a write refused by the
 * fence (LeaseLostError, thrown as is or as the cause of the user's error), or the run cut
 * by the Lease's loss (its signal aborted with a LeaseLostError). Nothing is wrong with the
 * object then: the replica that holds the Lease reconciles it.
 */
export function isFenced(error: Error, signal: AbortSignal): boolean {
  if (signal.aborted && signal.reason instanceof LeaseLostError) return true;
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 8; depth++) {
    if (cause instanceof LeaseLostError) return true;
    cause = cause.cause;
  }
  return false;
}
