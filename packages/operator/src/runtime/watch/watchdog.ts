import { type Clock, DEFAULT_WATCH_STALL_MS } from '@nestor/core';

/** How long past its timeout a watch may take to be ended by the server on a loaded machine. */
const WATCH_END_MARGIN_MS = 10_000;

/** The watch stream went quiet for too long (a half-open connection): reconnect. */
export class WatchStalledError extends Error {
  override readonly name = 'WatchStalledError';
}

/**
 * How long a watch of `timeoutSeconds` may stay silent. The server ends it at its timeout,
 * and sends a bookmark about every minute before that: silence past the earlier of the two
 * (plus a margin) is a dead connection.
 */
export function stallLimitMs(timeoutSeconds: number, stallTimeoutMs?: number): number {
  return stallTimeoutMs ?? Math.min(DEFAULT_WATCH_STALL_MS, timeoutSeconds * 1000 + WATCH_END_MARGIN_MS);
}

/**
 * Fires when nothing has arrived for `limitMs`. One timer per stream, re-armed only when it
 * fires early, so an event costs one clock read, not a timer reset.
 */
export class Watchdog {
  private lastAt: number;
  private handle: unknown;

  constructor(
    private readonly clock: Clock,
    private readonly limitMs: number,
    private readonly onStall: () => void,
  ) {
    this.lastAt = clock.now();
    this.arm(limitMs);
  }

  touch(): void {
    this.lastAt = this.clock.now();
  }

  stop(): void {
    this.clock.clearTimeout(this.handle);
  }

  private arm(ms: number): void {
    this.handle = this.clock.setTimeout(() => {
      const quietMs = this.clock.now() - this.lastAt;
      if (quietMs >= this.limitMs) this.onStall();
      else this.arm(this.limitMs - quietMs);
    }, ms);
  }
}
