import { systemClock, type Clock, type TimerHandle } from './clock.js';

/**
 * A connection with nothing read for 5 s is PINGed, and closed when no answer comes in
 * time: at most 10 s, less once the connection has shown how fast it answers (see
 * `pingDeadlineMs`): a connection that died without closing is found within 8 s of its last
 * data on a LAN, 15 s at worst. client-go's are 30 s + 15 s (HTTP2_READ_IDLE_TIMEOUT_SECONDS,
 * HTTP2_PING_TIMEOUT_SECONDS), which leave an operator blind for 45 s. The cost: one 17-byte
 * frame and its answer per idle connection every 5 s (watches share one connection, so a
 * handful a second at most), nothing that reaches the API server's handlers.
 */
export const DEFAULT_HTTP2_READ_IDLE_MS = 5_000;
export const DEFAULT_HTTP2_PING_TIMEOUT_MS = 10_000;

/**
 * The shortest wait for a PING's answer, however fast the connection answered before. A
 * server answers a PING from its read loop, ahead of any data, so an answer later than this
 * on a connection whose answers took milliseconds means it is gone; the floor covers a
 * server paused by CPU throttling or a network whose delay jumps. A stall of this process's
 * own event loop is not counted against the server (the deadline is judged on the next turn).
 */
export const MIN_HTTP2_PING_DEADLINE_MS = 3_000;
/** The wait is this many times the slowest of the connection's recent answers (TCP's RTO is ~4x the RTT's spread). */
const PING_RTT_FACTOR = 20;
/** Answers remembered per connection. */
const PING_SAMPLES = 8;

/**
 * How long a PING may wait for its answer: `pingTimeoutMs` until the connection has answered
 * one; then 20x its slowest recent answer, within [MIN_HTTP2_PING_DEADLINE_MS, pingTimeoutMs].
 */
export function pingDeadlineMs(recentAnswersMs: readonly number[], pingTimeoutMs: number): number {
  if (recentAnswersMs.length === 0) return pingTimeoutMs;
  const adaptive = Math.max(MIN_HTTP2_PING_DEADLINE_MS, PING_RTT_FACTOR * Math.max(...recentAnswersMs));
  return Math.min(pingTimeoutMs, adaptive);
}

export interface LivenessOptions {
  /** Nothing read for this long: send a PING (golang.org/x/net/http2's ReadIdleTimeout). */
  readIdleMs: number;
  /**
   * No answer to the PING within this: the connection is dead (PingTimeout). The longest
   * wait: once the connection has answered PINGs, the wait follows its answers (pingDeadlineMs).
   */
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
  /** When the PING now out was sent (clock time); its deadline is pingTimeoutMs later, or sooner once hastened. */
  private pingSentAt = 0;
  private deadlineAt = 0;
  private hastened = false;
  private stopped = false;
  /** How long the connection's recent PINGs took to be answered (ms), newest last. */
  private readonly answers: number[] = [];
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

  /** When the PING still out was sent (clock time), or undefined when none is out. */
  get pingOutSince(): number | undefined {
    return this.pinging && !this.stopped ? this.pingSentAt : undefined;
  }

  /**
   * Another connection to the same server just answered, while this one's PING has been out
   * for a while: the server is up and writing, so this connection has `withinMs` left to
   * answer, not the rest of pingTimeoutMs.
   */
  hasten(withinMs: number): void {
    if (this.stopped || !this.pinging) return;
    if (this.clock.now() + withinMs >= this.deadlineAt) return;
    this.hastened = true;
    this.armDeadline(withinMs);
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
    const sentAt = (this.pingSentAt = this.clock.now());
    this.hastened = false;
    this.ping(() => {
      if (this.stopped) return;
      this.pinging = false;
      this.answers.push(this.clock.now() - sentAt);
      if (this.answers.length > PING_SAMPLES) this.answers.shift();
      this.lastRead = Math.max(this.lastRead, sentAt);
      this.arm(this.options.readIdleMs);
    });
    this.armDeadline(pingDeadlineMs(this.answers, this.options.pingTimeoutMs));
  }

  /** When this fires while the PING is still out, the connection is dead. */
  private armDeadline(ms: number): void {
    this.clock.clearTimeout(this.timer);
    this.deadlineAt = this.clock.now() + ms;
    this.timer = this.clock.setTimeout(() => {
      // Judged on the next turn: after a stalled event loop, timers run before the reads
      // waiting in the socket, and the answer may be among them.
      this.timer = this.clock.setTimeout(() => {
        if (this.stopped || !this.pinging) return;
        const waited = this.clock.now() - this.pingSentAt;
        const why = this.hastened ? ' (another connection to the server answered meanwhile)' : '';
        this.stop();
        this.dead(
          Object.assign(new Error(`no answer to an HTTP/2 PING within ${Math.round(waited)} ms${why}`), {
            code: 'ETIMEDOUT',
          }),
        );
      }, 0);
    }, ms);
  }
}
