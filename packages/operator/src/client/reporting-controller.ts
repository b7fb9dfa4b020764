import { AsyncLocalStorage } from 'node:async_hooks';
import type { WriteFence } from './write-fence.js';

// Which controller runs the current code: the reconcile loop and the timers run each run in
// its controller's scope, so an Event recorded in it names the controller and its write is
// fenced by that controller's Lease.

const controllerScope = new AsyncLocalStorage<string>();

/**
 * Runs `fn` with `controller` as the reporting controller of the Events recorded inside it
 * (the reconcile loop runs each reconcile in one, so `kube.recordEvent` names the controller).
 * @internal
 */
export function withReportingController<T>(controller: string, fn: () => T): T {
  return controllerScope.run(controller, fn);
}

/** The controller whose reconcile (or timer) runs the current code, if any. */
export function currentReportingController(): string | undefined {
  return controllerScope.getStore();
}

/**
 * Asks `fence` whether `controller` (undefined: no controller) may write now; throws if not.
 * By name when the fence tells controllers apart (`of`), else in that controller's scope:
 * the Event recorder writes in batches, outside the recording code's async context.
 */
export function assertWritableAs(fence: WriteFence, controller: string | undefined): void {
  if (fence.of) fence.of(controller).assertWritable();
  else {
    const check = () => fence.assertWritable();
    if (controller === undefined) controllerScope.exit(check);
    else controllerScope.run(controller, check);
  }
}
