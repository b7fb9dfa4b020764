/**
 * Waits `ms`, or less when `signal` aborts: it then resolves early (callers that loop check
 * `signal.aborted`). The timer is not unref'd on purpose: a process waiting to retry must
 * stay alive while it waits.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
