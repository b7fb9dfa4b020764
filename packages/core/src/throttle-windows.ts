import { systemClock, type Clock, type TimerHandle } from './clock.js';

/**
 * Where the API server throttles: a window per resource that a 429 opened.
 *
 * API Priority and Fairness answers a request it has no seat for with 429 and a Retry-After
 * that it doubles, like TCP, while it keeps dropping requests (`dropped_requests_tracker.go`:
 * 1 s, then 2, 4, up to 32). client-go sleeps each refused request for its Retry-After and
 * sends it again, alongside whatever else its workers send: the refused requests of eight
 * workers wake together, meet at the level's seat again, all but one are refused again, and
 * the server's Retry-After grows with every round. Measured in the chaos suite's throttle row
 * (one seat, 8 workers, both frameworks): 7 + 6 + ... + 1 = 28 refusals, each worker but
 * one asleep for most of the throttle, and the last of them waking 3 s after the limit lifted.
 *
 * So the transport sends a throttled resource's requests within a window, as TCP does after
 * a loss: a 429 sets it to one request at a time (the refused one still waits its own
 * Retry-After first); once the Retry-After has passed with no further 429, it widens by one
 * per window's worth of answers that came while it was full; it closes once wider than what
 * was in flight when the throttling began.
 * Nothing waits more than the server asked, the server sees one request at a time instead
 * of refusing a crowd, and its Retry-After stays short, so when the limit lifts nothing is
 * left asleep for seconds. Watches are not held (a throttled resource keeps its watch).
 * Resources are apart (`/api/v1/.../configmaps` does not hold leases): a FlowSchema matches
 * by resource, and a throttled kind must not stop the Lease that keeps an operator leader.
 */
export class ThrottleWindows {
  private readonly windows = new Map<string, ThrottleWindow>();

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly onChange: (resource: string, open: boolean) => void = () => {},
  ) {}

  /** The resources throttled now (their requests go within a window). */
  resources(): string[] {
    for (const window of [...this.windows.values()]) window.closeIfStale();
    return [...this.windows.keys()];
  }

  /** The window of `path`'s resource, if one is open (nothing to look up when none is). */
  windowOf(path: string): ThrottleWindow | undefined {
    if (this.windows.size === 0) return undefined;
    const window = this.windows.get(resourceOf(path));
    return window?.closeIfStale() ? undefined : window;
  }

  /**
   * A request to `path` was answered 429 asking to wait `retryAfterMs`; `inFlight` requests
   * of the transport were out when it came (where the window closes again).
   */
  throttled(path: string, retryAfterMs: number, inFlight: number): void {
    const resource = resourceOf(path);
    let window = this.windows.get(resource);
    if (!window) {
      window = new ThrottleWindow(resource, Math.max(2, inFlight), this.clock, () => this.forget(resource));
      this.windows.set(resource, window);
      this.onChange(resource, true);
    }
    window.refused(retryAfterMs);
  }

  /** Closes every window: requests waiting in one fail with `error`, unsent. */
  close(error: Error): void {
    for (const window of [...this.windows.values()]) window.abandon(error);
  }

  private forget(resource: string): void {
    this.windows.delete(resource);
    this.onChange(resource, false);
  }
}

/** A window no request has met for this long after its last 429 closes (see closeIfStale). */
const STALE_MS = 60_000;

/** One throttled resource: how many of its requests may be out at once, and who waits. */
export class ThrottleWindow {
  /** Requests out through this window. */
  inFlight = 0;
  /** How many may be out at once. */
  limit = 1;
  /** No widening before this (the last 429's Retry-After). */
  private holdUntil = 0;
  /** When the last 429 came. */
  private refusedAt = 0;
  /** Answers since the last widening that went out with the window full. */
  private fullAnswers = 0;
  private readonly waiting: Waiter[] = [];
  private closed = false;

  constructor(
    readonly resource: string,
    /** What was in flight when the throttling began: wider than this, the window closes. */
    private readonly peak: number,
    private readonly clock: Clock,
    private readonly onClose: () => void,
  ) {}

  /**
   * Resolves when the request may go, with the ms it waited (the caller takes them off its
   * deadline); rejects when `signal` aborts or `timeoutMs` passes first.
   */
  enter(signal: AbortSignal | undefined, timeoutMs: number | undefined): number | Promise<number> {
    if (this.closed || (this.inFlight < this.limit && this.waiting.length === 0)) {
      this.inFlight++;
      return 0;
    }
    return new Promise<number>((resolve, reject) => {
      const waiter = new Waiter(this.clock, resolve, reject);
      this.waiting.push(waiter);
      const leave = (error: Error) => {
        const at = this.waiting.indexOf(waiter);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        waiter.fail(error);
      };
      waiter.watch(signal, timeoutMs, this.resource, leave);
    });
  }

  /** A request that entered has been answered and read (or failed): its place is free. */
  leave(): void {
    this.inFlight--;
    this.admit();
  }

  /**
   * A request that entered was answered, not 429 (it is still counted in flight). Past the
   * hold, the window widens by one per window's worth of answers that came while it was
   * full, as TCP after a loss (congestion avoidance, RFC 5681) and not while under-used
   * (RFC 7661). Widened per answer, even with one request out, it reached 4-6 within a
   * Retry-After, and the next burst of work met the server's one seat all at once: a crowd
   * of 429s where one was due.
   */
  answered(): void {
    if (this.closed || this.clock.now() < this.holdUntil || this.inFlight < this.limit) return;
    if (++this.fullAnswers < this.limit) return;
    this.fullAnswers = 0;
    this.limit++;
    if (this.limit > this.peak) this.close();
    this.admit();
  }

  /** A 429: one at a time again, and no widening until its Retry-After has passed. */
  refused(retryAfterMs: number): void {
    this.limit = 1;
    this.fullAnswers = 0;
    this.refusedAt = this.clock.now();
    this.holdUntil = Math.max(this.holdUntil, this.refusedAt + retryAfterMs);
  }

  /**
   * Closes the window when nothing waits and no 429 came for STALE_MS: the resource's
   * requests stopped or thinned while it was open (nothing filled it to widen it), so it
   * says nothing of the server now. True when closed.
   */
  closeIfStale(): boolean {
    if (this.waiting.length === 0 && this.clock.now() - this.refusedAt >= STALE_MS) this.close();
    return this.closed;
  }

  /** Closes the window; whoever waits in it fails with `error`. */
  abandon(error: Error): void {
    this.close();
    for (const waiter of this.waiting.splice(0)) waiter.fail(error);
  }

  /** Closed once: everyone may go, and the resource is no longer throttled. */
  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }

  private admit(): void {
    while (this.waiting.length > 0 && (this.closed || this.inFlight < this.limit)) {
      this.inFlight++;
      this.waiting.shift()!.admit();
    }
  }
}

/** A request waiting for its window, with its deadline and abort signal. */
class Waiter {
  private readonly since: number;
  private timer?: TimerHandle;
  private signal?: AbortSignal;
  private onAbort?: () => void;

  constructor(
    private readonly clock: Clock,
    private readonly resolve: (waitedMs: number) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.since = clock.now();
  }

  watch(
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    resource: string,
    leave: (error: Error) => void,
  ): void {
    if (signal) {
      this.signal = signal;
      this.onAbort = () => leave(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      if (signal.aborted) return this.onAbort();
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
    if (timeoutMs !== undefined) {
      this.timer = this.clock.setTimeout(() => {
        const message =
          `no answer within ${timeoutMs} ms: the API server throttles ${resource} (429) and the request ` +
          'waited its turn to be sent one at a time; it was not sent';
        leave(Object.assign(new Error(message), { code: 'ETIMEDOUT' }));
      }, timeoutMs);
    }
  }

  admit(): void {
    this.clear();
    this.resolve(this.clock.now() - this.since);
  }

  fail(error: Error): void {
    this.clear();
    this.reject(error);
  }

  private clear(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    if (this.onAbort) this.signal?.removeEventListener('abort', this.onAbort);
  }
}

/**
 * The resource a request path names, as a FlowSchema's resource rule sees it: `configmaps`,
 * `apps/deployments`, `coordination.k8s.io/leases` (a subresource counts as its resource).
 */
export function resourceOf(path: string): string {
  const query = path.indexOf('?');
  const parts = (query < 0 ? path : path.slice(0, query)).split('/').filter(Boolean);
  let group: string;
  let rest: string[];
  if (parts[0] === 'api') {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    group = parts[1] ?? '';
    rest = parts.slice(3);
  } else {
    return parts[0] ?? '';
  }
  const resource = rest[0] === 'namespaces' && rest.length >= 3 ? rest[2] : rest[0];
  return group ? `${group}/${resource ?? ''}` : (resource ?? '');
}
