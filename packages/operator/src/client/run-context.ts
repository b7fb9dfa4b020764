import { AsyncLocalStorage } from 'node:async_hooks';

// The one ambient store of the runtime: which run (a reconcile or a timer) the current code
// belongs to. The run wrapper (runtime/controller-runs.ts) sets it around each run; the
// client reads it where nothing explicit was given (the injected KubeClient in a nested
// helper: whose Lease fences the write, which signal cuts it, which controller reports its
// Events). Below the runtime, as the client reads it.

/** The run the current code belongs to: a reconcile, or a `@Timer` run. */
export interface RunContext {
  /** The controller whose run it is: its Lease fences the writes, its name reports the Events. */
  readonly controller: string;
  /** The object's queue key, `namespace/name`. */
  readonly key: string;
  /** 1 for the first try, n for the n-th retry in a row after errors (1 for a timer run). */
  readonly attempt: number;
  /** Aborted on the run's timeout, a lost Lease and shutdown past the grace period. */
  readonly signal: AbortSignal;
  /** Unique per run: in its log lines and its span. */
  readonly reconcileId: string;
}

const store = new AsyncLocalStorage<RunContext>();

/**
 * Runs `fn` as the run `context`: the code it calls, awaited or left running, reads it.
 * @internal
 */
export function runInContext<T>(context: RunContext, fn: () => T): T {
  return store.run(context, fn);
}

/** The run the calling code belongs to, or undefined outside any reconcile or timer run. */
export function currentRun(): RunContext | undefined {
  return store.getStore();
}
