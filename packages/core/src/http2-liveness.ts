import { systemClock, type Clock, type TimerHandle } from './clock.js';

/** client-go's values (HTTP2_READ_IDLE_TIMEOUT_SECONDS, HTTP2_PING_TIMEOUT_SECONDS in apimachinery's util/net). */
export const DEFAULT_HTTP2_READ_IDLE_MS = 30_000;
export const DEFAULT_HTTP2_PING_TIMEOUT_MS = 15_000;

export interface LivenessOptions {
  /** Nothing read for this long: send a PING (golang.org/x/net/http2's ReadIdleTimeout). */
  readIdleMs: number;
  /** No answer to the PING within this: the connection is dead (PingTimeout). */
  pingTimeoutMs: number;
  clock?: Clock;
}

/**
 * The health check of one HTTP/2 connection, as Go's HTTP/2 transport does it for client-go:
 * when nothing has been read for `readIdleMs`, send a PING; no answer within `pingTimeoutMs`
 * means the connection died without closing (a NAT or load balancer that dropped it), and
 * `dead` is called to close it and fail its streams. A busy connection costs one property
 * write per read (`read()`); the timer only re-arms itself.
 */
export class Liveness {
  private lastRead: number;
  private timer?: TimerHandle;
  private pinging = false;
  private stopped = false;
  private readonly clock: Clock;

  constructor(
    /** Sends a PING and calls `answered` when its ACK arrives. */
    private readonly ping: (answered: () => void) => void,
    private readonly dead: (error: Error) => void,
    private readonly options: LivenessOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.lastRead = this.clock.now();
    this.arm(options.readIdleMs);
  }

  /** Something arrived on the connection. */
  read(): void {
    this.lastRead = this.clock.now();
  }

  /** Check now (a request got no answer in time): PING unless one is already out. */
  check(): void {
    if (!this.stopped && !this.pinging) this.sendPing();
  }

  stop(): void {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
  }

  private arm(ms: number): void {
    this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => this.due(), ms);
  }

  private due(): void {
    if (this.stopped || this.pinging) return;
    const idle = this.clock.now() - this.lastRead;
    if (idle < this.options.readIdleMs) this.arm(this.options.readIdleMs - idle);
    else this.sendPing();
  }

  private sendPing(): void {
    this.pinging = true;
    const sentAt = this.clock.now();
    this.ping(() => {
      if (this.stopped) return;
      this.pinging = false;
      this.lastRead = Math.max(this.lastRead, sentAt);
      this.arm(this.options.readIdleMs);
    });
    // When this fires while the PING is still out, the connection is dead.
    this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => {
      if (this.stopped || !this.pinging) return;
      this.stop();
      this.dead(
        Object.assign(new Error(`no answer to an HTTP/2 PING within ${this.options.pingTimeoutMs} ms`), {
          code: 'ETIMEDOUT',
        }),
      );
    }, this.options.pingTimeoutMs);
  }
}
