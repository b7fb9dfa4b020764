import { AsyncLocalStorage } from 'node:async_hooks';

// The abort signal of the work in progress, carried through async calls: a reconcile runs
// inside one, and the client's requests made anywhere below it are cut when it aborts (its
// timeout, a lost lease, shutdown past the grace period) without the user passing the
// signal down by hand.
const scope = new AsyncLocalStorage<AbortSignal>();

/** Runs `fn` with `signal` as the ambient abort signal. */
export function withAbortSignal<T>(signal: AbortSignal, fn: () => T): T {
  return scope.run(signal, fn);
}

/**
 * The ambient abort signal, if the caller runs inside withAbortSignal().
 * @internal
 */
export function ambientSignal(): AbortSignal | undefined {
  return scope.getStore();
}
