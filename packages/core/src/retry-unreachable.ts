import { type Connectivity, isUnreachable } from './connectivity.js';
import type { RuntimeLogger } from './logger.js';
import { resendWhenReady } from './resend-when-ready.js';
import { sleepUntilReady } from './sleep-until-ready.js';

export interface RetryUnreachableOptions {
  /** Give up after this long (the caller's start-up bound). */
  timeoutMs: number;
  /** What is being done, for the log line and the error. */
  what: string;
  logger?: RuntimeLogger;
  /** Pause between attempts (default 1 s; with `connectivity`, the most it waits for readiness: default 10 s). */
  intervalMs?: number;
  signal?: AbortSignal;
  /**
   * The transport's connectivity, with an outage gate probing /readyz (every 250 ms, after
   * 30 s every second): the step then retries when the server is ready again, not at the
   * first answer (a 403 while its authorizer syncs would fail the start-up), and retries
   * what the server answers meanwhile too.
   */
  connectivity?: Pick<Connectivity, 'whenReady' | 'inOutage'>;
  /**
   * Asked after a failure that got an answer outside a known outage: true when the server
   * is not ready yet (a fresh process's first requests can meet a server that restarts
   * and answers 403 while its authorizer syncs); the step then retries as in an outage.
   */
  notReady?: () => Promise<boolean>;
  /**
   * With `connectivity`: an attempt started during an outage and still pending when the
   * server is found ready is left to finish unobserved, and a new one starts at once. A
   * kube-apiserver that is starting holds the requests it accepts, some for seconds after
   * it is ready. Only for attempts that may run twice at once (reads, server-side apply).
   */
  restartWhenReady?: boolean;
}

const READY = Symbol('ready');

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
      const pending = attempt();
      if (!options.restartWhenReady) return await pending;
      const ready = Promise.withResolvers<typeof READY>();
      const answered = resendWhenReady(options.connectivity, () => ready.resolve(READY), options.signal);
      if (!answered) return await pending;
      const outcome = await Promise.race([pending, ready.promise]).finally(answered);
      if (outcome !== READY) return outcome as T;
      if (options.signal?.aborted) return await pending;
      pending.catch(() => undefined);
      options.logger?.info(
        `the API server is ready; ${options.what} again (the attempt sent before is still unanswered)`,
      );
      continue;
    } catch (error) {
      const connectivity = options.connectivity;
      const outage = isUnreachable(error) || connectivity?.inOutage === true || (await options.notReady?.()) === true;
      if (!outage || options.signal?.aborted) throw error;
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
      // Where nothing probes (no connectivity), a fixed pause between attempts.
      const cap = connectivity
        ? Math.min(options.intervalMs ?? 10_000, Math.max(0, deadline - Date.now()))
        : (options.intervalMs ?? 1000);
      await sleepUntilReady(cap, { signal: options.signal, connectivity });
    }
  }
}
