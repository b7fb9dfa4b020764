import type { ResponseHead } from './exchange.js';

/** Sends of one request after 429 (or 5xx) with Retry-After, as client-go's maxRetries. */
export const DEFAULT_RETRY_AFTER_ATTEMPTS = 10;

/** Retry-After in whole seconds, as client-go reads it (an HTTP date or a fraction: none). */
export function retryAfterSeconds(head: ResponseHead): number | undefined {
  const header = head.headers['retry-after'];
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  return Number.isInteger(seconds) && seconds >= 1 ? seconds : undefined;
}

/**
 * The ms to wait before sending again when the server asked for it (Retry-After in whole
 * seconds, as client-go reads it) on a 429, or on a 5xx to a read (a write may have been
 * done), while retries are left and the wait ends within the request's deadline; else
 * undefined: the answer goes to the caller (and its workqueue waits as long).
 */
export function retryAfterWait(
  method: string,
  head: ResponseHead,
  throttled: number,
  elapsedMs: number,
  timeoutMs: number | undefined,
  attempts = DEFAULT_RETRY_AFTER_ATTEMPTS,
): number | undefined {
  const read = method === 'GET' || method === 'HEAD';
  if (head.status !== 429 && !(head.status >= 500 && read)) return undefined;
  if (throttled >= attempts) return undefined;
  const seconds = retryAfterSeconds(head);
  if (seconds === undefined) return undefined;
  const waitMs = seconds * 1000;
  if (timeoutMs !== undefined && elapsedMs + waitMs >= timeoutMs) return undefined;
  return waitMs;
}
