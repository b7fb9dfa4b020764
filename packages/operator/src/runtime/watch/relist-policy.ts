import { type Clock, KubeApiError, retryAfterMs as serverRetryAfterMs, systemClock } from '@nestor/core';
import { Backoff, type BackoffOptions } from '../backoff.js';

/** A list+watch healthy this long since its last retry began starts its backoff again from the first delay. */
export const WATCH_BACKOFF_RESET_MS = 30_000;

/**
 * Answers that said when to come back (Retry-After, a Status's retryAfterSeconds) retried then,
 * not on the backoff, with no event between: client-go's request retries take as many.
 */
export const MAX_RETRIES_AS_ASKED = 10;

/**
 * An answer that calls for a retry at once (410 Gone, "too large" with no resourceVersion to
 * wait for, an etcd hiccup on a working watch) within this long of the previous one of its
 * kind waits its backoff: an isolated one goes at once, a loop does not.
 */
const AT_ONCE_GAP_MS = 10_000;

/**
 * How some servers say "too old resourceVersion" without 410: etcd's own compaction error
 * passed through as a 500 (an etcd3 watcher that did not translate it), or the watch cache's
 * message under another code. The resourceVersion is gone either way: relist.
 */
const COMPACTED = /too old resource version|required revision has been compacted/i;
/** The API server is behind the resourceVersion asked for (its watch cache, or a restored etcd). */
const TOO_LARGE = /too large resource version/i;

/** A failed LIST, streamed sync or WATCH, as the list+watch loop saw it. */
export interface WatchFailure {
  readonly error: Error;
  /** 'list': a LIST or a streamed sync; 'watch': a watch past its sync. */
  readonly phase: 'list' | 'watch';
  /** Where the next WATCH would start; undefined when a full sync comes next anyway. */
  readonly resourceVersion: string | undefined;
  /** A LIST failed after some of its pages: its next attempt asks for the page that failed. */
  readonly listResumes: boolean;
}

/** What to do about a failure. */
export interface RetryPlan {
  /** Forget the resourceVersion: a full sync (stream or LIST) next, not a resumed watch. */
  readonly relist: boolean;
  /** Why: the resourceVersion expired (410 Gone, etcd's "compacted"), which is routine. */
  readonly gone: boolean;
  /**
   * The LIST of that sync asks for a state not older than this resourceVersion, which the
   * API server serves from its watch cache; undefined: a consistent read (or, first, the cache).
   */
  readonly notOlderThan: string | undefined;
  /** Wait this long first; 0: at once. */
  readonly retryInMs: number;
  /** The wait is the one the server asked for (Retry-After, retryAfterSeconds). */
  readonly asAsked: boolean;
}

export interface RelistPolicyOptions {
  clock?: Clock;
  random?: () => number;
  /** Overrides of the backoff's settings (WatchOptions.backoff). */
  backoff?: BackoffOptions;
}

type AtOnceKind = 'gone' | 'tooLarge' | 'internal';

/**
 * Decides, after each failure of a list+watch, whether to relist or resume, from which
 * resourceVersion, and after how long; as client-go's reflector, with the exceptions said
 * where they are made. It sends nothing and waits for nothing: the loop does both.
 */
export class RelistPolicy {
  private readonly clock: Clock;
  private readonly backoff: Backoff;
  /** When each kind of answer that goes at once last came (clock ms). See AT_ONCE_GAP_MS. */
  private readonly lastAtOnce = new Map<AtOnceKind, number>();
  /** The error the stream itself carried (an ERROR event): the watch had been served. */
  private brokeBy?: Error;
  /** The resourceVersion the stream last broke at. */
  private brokenAt?: string;
  /** The stream broke twice at one resourceVersion: the next failure relists, not resumes. */
  private relistNext = false;
  /** Failures retried when the server asked (not on the backoff) since the last event. */
  private retriedAsAsked = 0;

  constructor(options: RelistPolicyOptions = {}) {
    this.clock = options.clock ?? systemClock;
    // A watch that worked for 30 s since its last retry began retries quickly again: with
    // client-go's 2 min, a fault a minute after another waited up to 60 s (measured).
    this.backoff = new Backoff({
      clock: this.clock,
      random: options.random ?? Math.random,
      resetAfterMs: WATCH_BACKOFF_RESET_MS,
      ...options.backoff,
    });
  }

  /**
   * The stream broke at `resourceVersion` (an ERROR event, an unreadable event): the next
   * watch resumes there, which most such errors call for (an etcd hiccup, a conversion
   * webhook away). A second break at the same resourceVersion relists instead, as client-go
   * relists on any: what fails may be the resourceVersion itself (compacted but not said
   * with 410, ahead of a restored etcd).
   */
  broke(error: Error, resourceVersion: string | undefined): void {
    if (resourceVersion !== undefined && resourceVersion === this.brokenAt) this.relistNext = true;
    this.brokenAt = resourceVersion;
    this.brokeBy = error;
  }

  /** An event arrived: answers that say when count from none again. */
  progressed(): void {
    this.retriedAsAsked = 0;
  }

  /** The server was found ready, or a request is sent again after an outage: the backoff starts afresh. */
  reset(): void {
    this.backoff.reset();
  }

  /** The plan for `failure`; each call counts one failure. */
  failed(failure: WatchFailure): RetryPlan {
    const { error, phase } = failure;
    const api = error instanceof KubeApiError ? error : undefined;
    const gone = api !== undefined && (api.isGone || COMPACTED.test(api.detail));
    const brokenTwice = this.relistNext && !gone;
    this.relistNext = false;
    const inStream = error === this.brokeBy;
    this.brokeBy = undefined;
    const relist = gone || brokenTwice;
    // A watch that ended relists from where it was (for a relist, where it broke twice).
    const tooLarge = api !== undefined && TOO_LARGE.test(api.detail);
    const notOlderThan = relist && phase === 'watch' && !tooLarge ? failure.resourceVersion : undefined;
    if (relist) this.brokenAt = undefined;
    const resourceVersion = relist ? undefined : failure.resourceVersion;
    // Never sooner than the server asked (429 from API Priority and Fairness, 5xx with
    // Retry-After, a watch's "too large resourceVersion" with retryAfterSeconds). Nor later:
    // an answer that says when is retried then, and does not grow the backoff, which is for
    // failures that say nothing (past ten such answers with no event between, it counts again).
    const retryAfterMs = serverRetryAfterMs(error) ?? 0;
    const asAsked = retryAfterMs > 0 && this.retriedAsAsked < MAX_RETRIES_AS_ASKED;
    if (asAsked) this.retriedAsAsked++;
    // 410 Gone needs a LIST and nothing else: at once, unless the last one was recent (a loop).
    const now = this.clock.now();
    const relistNow = this.isolated('gone', gone, now) && retryAfterMs === 0;
    // "Too large resourceVersion" asks for a wait until the server has caught up with that
    // resourceVersion; a consistent read asks for none, so it goes at once (client-go's
    // reflector too), unless the last one was recent.
    const consistentRead = tooLarge && resourceVersion === undefined;
    const consistentNow = this.isolated('tooLarge', consistentRead, now) && !failure.listResumes;
    // A served watch ended by the API server's InternalError ("etcdserver: no leader": etcd
    // electing, usually over within a second) resumes at once, as the API server's own watch
    // cache retries its etcd watch (client-go's MaxInternalErrorRetryDuration, 30 s there);
    // once, and the backoff if it comes again. A 500 answering the request itself, or an ERROR
    // whose object is no Status (a proxy's, not the server's word), waits the backoff.
    const hiccup = inStream && !relist && api?.statusObject?.reason === 'InternalError';
    const resumeNow = this.isolated('internal', hiccup, now) && retryAfterMs === 0;
    const retryInMs =
      relistNow || consistentNow || resumeNow
        ? 0
        : asAsked
          ? retryAfterMs
          : Math.max(this.backoff.next(), retryAfterMs);
    return { relist, gone, notOlderThan, retryInMs, asAsked };
  }

  /**
   * Whether an answer of `kind` that `came` now is the first of its kind for AT_ONCE_GAP_MS,
   * and so may be retried at once; notes it either way.
   */
  private isolated(kind: AtOnceKind, came: boolean, now: number): boolean {
    if (!came) return false;
    const last = this.lastAtOnce.get(kind) ?? -Infinity;
    this.lastAtOnce.set(kind, now);
    return now - last > AT_ONCE_GAP_MS;
  }
}
