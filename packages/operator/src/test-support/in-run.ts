import { runInContext } from '../client/run-context.js';

/** Runs `fn` as if inside a run (a reconcile) of `controller`, as the run wrapper does. */
export function inRun<T>(controller: string, fn: () => T, signal: AbortSignal = new AbortController().signal): T {
  return runInContext({ controller, key: 'ns/test', attempt: 1, signal, reconcileId: 'test-run' }, fn);
}
