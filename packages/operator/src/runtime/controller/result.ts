import { inspect } from 'node:util';

/**
 * What a reconcile returns. Nothing (or `{}`) means done: the object is at its desired
 * state until something changes. `requeueAfter` runs it again after that many ms and
 * resets the backoff; `requeue: true` runs it again with backoff, as after an error.
 */
export interface ReconcileResult {
  requeueAfter?: number;
  requeue?: boolean;
}

/**
 * An error that retrying cannot fix (invalid spec, a missing prerequisite only a human
 * can create). It is recorded and reported, and the object is not retried until it
 * changes — as controller-runtime's reconcile.TerminalError.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/** A reconcile ran past its timeout; its AbortSignal fired. */
export class ReconcileTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`reconcile did not finish within its timeout of ${timeoutMs} ms (its AbortSignal was aborted)`);
    this.name = 'ReconcileTimeoutError';
  }
}

/** Whatever was thrown, as an Error with a readable message (`throw 'x'` and `throw {}` included). */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  const error = new Error(`a non-Error value was thrown: ${inspect(thrown, { depth: 3, breakLength: Infinity })}`);
  (error as Error & { thrown?: unknown }).thrown = thrown;
  return error;
}

export function isTerminal(error: unknown): boolean {
  return error instanceof TerminalError || (error instanceof Error && error.name === 'TerminalError');
}
