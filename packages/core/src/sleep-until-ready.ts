import type { Clock } from './clock.js';
import type { Connectivity } from './connectivity.js';

/** Real timers not unref'd, as sleep()'s: a process waiting to retry must stay alive. */
const keepAlive: Pick<Clock, 'setTimeout' | 'clearTimeout'> = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface SleepUntilReadyOptions {
  /** Ends the wait early ('slept'). */
  signal?: AbortSignal;
  /** Where nothing probes the server (no outage gate), the whole `ms` is waited. */
  connectivity?: Pick<Connectivity, 'whenReady'>;
  /** Default: real timers that keep the process alive. */
  clock?: Pick<Clock, 'setTimeout' | 'clearTimeout'>;
}

/**
 * Waits `ms`, or less: 'ready' when the outage gate finds the API server ready first, so a
 * step that failed for want of a response retries as soon as the server is back, not when
 * its delay ends; 'slept' when the delay ends or `signal` aborts.
 */
export function sleepUntilReady(ms: number, options: SleepUntilReadyOptions = {}): Promise<'slept' | 'ready'> {
  const { signal, connectivity } = options;
  const timers = options.clock ?? keepAlive;
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve('slept');
    const woken = new AbortController();
    const done = (how: 'slept' | 'ready') => {
      timers.clearTimeout(handle);
      woken.abort();
      signal?.removeEventListener('abort', slept);
      resolve(how);
    };
    const slept = () => done('slept');
    const handle = timers.setTimeout(slept, ms);
    signal?.addEventListener('abort', slept, { once: true });
    if (connectivity) {
      void connectivity.whenReady(signal ? AbortSignal.any([woken.signal, signal]) : woken.signal).then(() => {
        if (!woken.signal.aborted) done('ready');
      });
    }
  });
}
