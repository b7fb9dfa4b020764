import { createHash } from 'node:crypto';
import {
  METRICS_REVIEW_APPROVAL_TTL_MS,
  METRICS_REVIEW_CACHE_ENTRIES,
  METRICS_REVIEW_REFUSAL_TTL_MS,
  METRICS_TOKEN_REVIEW_BURST,
  METRICS_TOKEN_REVIEWS_PER_SECOND,
  silentLogger,
  systemClock,
  type Clock,
  type RuntimeLogger,
} from '@nestor/core';
import type { AccessReviews, NonResourceRequest, UserInfo } from './access-reviews.js';
import { ReviewCache } from './review-cache.js';
import { ReviewRateLimit } from './review-rate-limit.js';

/** What to answer: go on (200), or refuse with a status and a message that reveals nothing internal. */
export type AccessDecision =
  | { status: 200; user: string }
  | { status: 401 | 403 | 500; message: string }
  | { status: 429; message: string; retryAfterSeconds: number };

export interface MetricsAccessOptions {
  /** How long an accepted token and an allowed user are kept (default METRICS_REVIEW_APPROVAL_TTL_MS, 1 min). */
  approvalTtlMs?: number;
  /** How long a refused token and a denied user are kept (default METRICS_REVIEW_REFUSAL_TTL_MS, 10 s). */
  refusalTtlMs?: number;
  /** Bound on the approvals, and apart from them on the refusals, of each cache (default 1024). */
  maxEntries?: number;
  /** TokenReviews a second for tokens never accepted before (default 10), in bursts up to `tokenReviewBurst` (default 20). */
  tokenReviewsPerSecond?: number;
  tokenReviewBurst?: number;
  clock?: Clock;
  logger?: RuntimeLogger;
}

/** Refusals by the rate limit are logged at most this often, with their count. */
const RATE_LIMIT_LOG_INTERVAL_MS = 10_000;

class ReviewRateLimited extends Error {
  constructor(readonly retryAfterMs: number) {
    super('TokenReview rate limit reached');
  }
}

/**
 * Who may read /metrics, as controller-runtime's WithAuthenticationAndAuthorization filter
 * decides it: the request's bearer token must pass a TokenReview, and its user a
 * SubjectAccessReview for the request's verb on its non-resource URL (`get /metrics`,
 * what the metrics-reader ClusterRole grants). Both answers are cached briefly, keyed by a
 * hash of the token and by the user and request, approvals apart from refusals. Better
 * than controller-runtime: TokenReviews for tokens never accepted before are rate limited,
 * so a flood of made-up tokens costs the API server a bounded number of reviews and
 * pushes out no scraper's approval.
 */
export class MetricsAccess {
  private readonly tokens: ReviewCache<UserInfo | null>;
  private readonly decisions: ReviewCache<boolean>;
  private readonly newTokenReviews: ReviewRateLimit;
  private readonly clock: Clock;
  private readonly log: RuntimeLogger;
  /** Requests refused by the rate limit since it was last logged, and when that was. */
  private limited = 0;
  private limitLoggedAt = -Infinity;

  constructor(
    private readonly reviews: AccessReviews,
    options: MetricsAccessOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    const common = {
      approvalTtlMs: options.approvalTtlMs ?? METRICS_REVIEW_APPROVAL_TTL_MS,
      refusalTtlMs: options.refusalTtlMs ?? METRICS_REVIEW_REFUSAL_TTL_MS,
      maxEntries: options.maxEntries ?? METRICS_REVIEW_CACHE_ENTRIES,
      clock: this.clock,
    };
    this.tokens = new ReviewCache({ approves: (user) => user !== null, ...common });
    this.decisions = new ReviewCache({ approves: (allowed) => allowed, ...common });
    this.newTokenReviews = new ReviewRateLimit(
      options.tokenReviewsPerSecond ?? METRICS_TOKEN_REVIEWS_PER_SECOND,
      options.tokenReviewBurst ?? METRICS_TOKEN_REVIEW_BURST,
      this.clock,
    );
    this.log = options.logger ?? silentLogger;
  }

  /** The decision on a request with this Authorization header. */
  async check(authorization: string | undefined, request: NonResourceRequest): Promise<AccessDecision> {
    const token = bearerToken(authorization);
    if (!token) return { status: 401, message: 'Unauthorized: send a bearer token (Authorization: Bearer <token>)' };
    let user: UserInfo | null;
    try {
      user = await this.tokens.get(sha256(token), async (acceptedBefore) => {
        // A token accepted before is asked about again at once: the flood cannot lock out a scraper.
        const waitMs = acceptedBefore ? 0 : this.newTokenReviews.take();
        if (waitMs > 0) throw new ReviewRateLimited(waitMs);
        return (await this.reviews.authenticate(token)) ?? null;
      });
    } catch (error) {
      if (error instanceof ReviewRateLimited) return this.rateLimited(error.retryAfterMs, request);
      this.log.error(`cannot review a token for ${request.verb} ${request.path}: ${(error as Error).message}`);
      return { status: 500, message: 'Authentication failed' };
    }
    if (!user) {
      this.log.debug(`${request.verb} ${request.path}: the API server does not accept the token`);
      return { status: 401, message: 'Unauthorized' };
    }
    const { username } = user;
    let allowed: boolean;
    try {
      allowed = await this.decisions.get(JSON.stringify([user, request.verb, request.path]), () =>
        this.reviews.authorize(user, request),
      );
    } catch (error) {
      this.log.error(
        `cannot review whether ${username} may ${request.verb} ${request.path}: ${(error as Error).message}`,
      );
      return { status: 500, message: `Authorization for user ${username} failed` };
    }
    if (!allowed) {
      this.log.debug(`${username} may not ${request.verb} ${request.path}`);
      return {
        status: 403,
        message: `Forbidden: user ${username} may not ${request.verb} ${request.path} (bind it to a ClusterRole that allows it, as the metrics-reader role does)`,
      };
    }
    return { status: 200, user: username };
  }

  private rateLimited(retryAfterMs: number, request: NonResourceRequest): AccessDecision {
    // One line per interval, not one per request: the flood must not flood the log too.
    this.limited++;
    const now = this.clock.now();
    if (now - this.limitLoggedAt >= RATE_LIMIT_LOG_INTERVAL_MS) {
      const { perSecond, burst } = this.newTokenReviews;
      this.log.warn(
        `${request.verb} ${request.path}: answered 429 to ${this.limited} request(s) with tokens not seen before ` +
          `since the last such line: TokenReviews for new tokens are limited to ${perSecond}/s (burst ${burst}); ` +
          'a caller is sending many different tokens (a scraper restarted in bulk, or someone guessing)',
      );
      this.limited = 0;
      this.limitLoggedAt = now;
    }
    const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    return {
      status: 429,
      message: `Too Many Requests: too many new tokens to review; retry after ${retryAfterSeconds} s`,
      retryAfterSeconds,
    };
  }
}

/** The token of an `Authorization: Bearer <token>` header (the scheme in any case, RFC 7235). */
function bearerToken(header: string | undefined): string | undefined {
  const match = /^bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
