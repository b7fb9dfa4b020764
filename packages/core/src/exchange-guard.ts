import type { Exchange, ResponseHead } from './exchange.js';
import type { ThrottleWindow } from './throttle-windows.js';

/** An exchange whose head came, with its deadline and signal still watching it. */
export interface Answered {
  head: ResponseHead;
  exchange: Exchange;
  guard: ExchangeGuard;
  /** The throttled resource's window whose place this exchange holds until it is released. */
  window?: ThrottleWindow | undefined;
}

/** The deadline and the abort signal of one exchange, whatever carries it. */
export class ExchangeGuard {
  /** Set when the deadline cut the exchange. */
  fired?: Error;
  /** When the request was sent (`performance.now()`). */
  readonly sentAt = performance.now();
  private readonly timer?: NodeJS.Timeout;
  private removeAbort?: () => void;

  // The deadline and the abort listener are made by functions of their own: closures made in
  // one function share one context, and with both here each request's exchange outlived it
  // long enough to be promoted (8 writes in flight, each with a signal, 4,000 in all: peak heap
  // 37 MB with the closures together, 18 MB apart, as before the transport's split).
  constructor(
    readonly exchange: Exchange,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ) {
    if (timeoutMs) this.timer = deadline(this, exchange, timeoutMs);
    // Not http.request's `signal` option: Node passes it on to the socket it creates, so a
    // kept-alive socket would die with the first request's signal while serving another.
    if (signal?.aborted) exchange.cut();
    else if (signal) this.removeAbort = cutOnAbort(signal, exchange);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.removeAbort?.();
  }
}

function deadline(guard: ExchangeGuard, exchange: Exchange, timeoutMs: number): NodeJS.Timeout {
  const timer = setTimeout(() => {
    guard.fired = Object.assign(new Error(`no complete answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
    exchange.expire();
  }, timeoutMs);
  timer.unref();
  return timer;
}

/** Cuts the exchange when `signal` aborts; returns what removes the listener. */
function cutOnAbort(signal: AbortSignal, exchange: Exchange): () => void {
  const abort = () => exchange.cut();
  signal.addEventListener('abort', abort, { once: true });
  return () => signal.removeEventListener('abort', abort);
}
