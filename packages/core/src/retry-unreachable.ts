import { isUnreachable } from './connectivity.js';
import type { RuntimeLogger } from './logger.js';
import { sleep } from './sleep.js';

export interface RetryUnreachableOptions {
  /** Give up after this long (the caller's start-up bound). */
  timeoutMs: number;
  /** What is being done, for the log line and the error. */
  what: string;
  logger?: RuntimeLogger;
  /** Pause between attempts (default 1 s). */
  intervalMs?: number;
  signal?: AbortSignal;
}

/**
 * Runs `attempt` until it does not fail for want of a response from the API server, up to
 * `timeoutMs`; any other failure is thrown at once. For start-up steps: an operator started
 * while the API server is down waits for it, bounded, and then says why it gives up.
 * The sleeps keep the process alive while it waits.
 */
export async function retryWhileUnreachable<T>(
  attempt: () => Promise<T>,
  options: RetryUnreachableOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let logged = false;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isUnreachable(error) || options.signal?.aborted) throw error;
      if (Date.now() >= deadline) {
        throw new Error(
          `gave up ${options.what} after ${options.timeoutMs} ms: the API server did not answer (${(error as Error).message})`,
          { cause: error },
        );
      }
      if (!logged) {
        options.logger?.warn(`the API server does not answer while ${options.what}; retrying until it does`, {
          error: (error as Error).message,
        });
        logged = true;
      }
      await sleep(options.intervalMs ?? 1000, options.signal);
    }
  }
}
