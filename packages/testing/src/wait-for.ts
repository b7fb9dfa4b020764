import { sleep } from '@nestor/core';

export interface WaitForOptions {
  /** Upper bound on the wait (default 30 s). */
  timeoutMs?: number;
  /** Pause between checks (default 50 ms). */
  intervalMs?: number;
  /** What is awaited, for the failure message. */
  what?: string;
}

/**
 * Waits until `check` returns a value other than undefined/false (or stops throwing) and
 * returns it; fails after the bound with the last error. Tests wait on conditions, not on
 * fixed sleeps.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Exclude<T, false | undefined>> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as Exclude<T, false | undefined>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'a condition'}${why}`);
    }
    await sleep(options.intervalMs ?? 50);
  }
}
