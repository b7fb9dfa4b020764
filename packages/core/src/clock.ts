/** Time as the runtime sees it; tests swap in a manual clock to drive delays and backoff. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export type TimerHandle = unknown;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref?.();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Resolves true when a waiter added to `waiters` is called (the caller calls them all once
 * it goes idle), or false after `graceMs` on `clock`: the shape of every drain.
 */
export function idleWithin(waiters: Set<() => void>, clock: Clock, graceMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const settle = () => {
      clock.clearTimeout(timer);
      resolve(true);
    };
    const timer = clock.setTimeout(() => {
      waiters.delete(settle);
      resolve(false);
    }, graceMs);
    waiters.add(settle);
  });
}
