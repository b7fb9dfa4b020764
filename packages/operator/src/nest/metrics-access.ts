import { createHash } from 'node:crypto';
import { silentLogger, type Clock, type RuntimeLogger } from '@nestor/core';
import type { AccessReviews, NonResourceRequest, UserInfo } from './access-reviews.js';
import { ReviewCache } from './review-cache.js';

/** What to answer: go on (200), or refuse with a status and a message that reveals nothing internal. */
export type AccessDecision = { status: 200; user: string } | { status: 401 | 403 | 500; message: string };

export interface MetricsAccessOptions {
  /** How long a TokenReview's answer is kept, accepted or not (default 1 min). */
  tokenTtlMs?: number;
  /** How long an allowed SubjectAccessReview is kept (default 1 min). */
  allowTtlMs?: number;
  /** How long a denial is kept (default 10 s: a newly bound scraper gets in soon). */
  denyTtlMs?: number;
  /** Bound on each cache (default 1024). */
  maxEntries?: number;
  clock?: Clock;
  logger?: RuntimeLogger;
}

/**
 * Who may read /metrics, as controller-runtime's WithAuthenticationAndAuthorization filter
 * decides it: the request's bearer token must pass a TokenReview, and its user a
 * SubjectAccessReview for the request's verb on its non-resource URL (`get /metrics`,
 * what the metrics-reader ClusterRole grants). Both answers are cached briefly, keyed by a
 * hash of the token and by the user and request.
 */
export class MetricsAccess {
  private readonly tokens: ReviewCache<UserInfo | null>;
  private readonly decisions: ReviewCache<boolean>;
  private readonly log: RuntimeLogger;

  constructor(
    private readonly reviews: AccessReviews,
    options: MetricsAccessOptions = {},
  ) {
    const tokenTtlMs = options.tokenTtlMs ?? 60_000;
    const allowTtlMs = options.allowTtlMs ?? 60_000;
    const denyTtlMs = options.denyTtlMs ?? 10_000;
    const common = {
      ...(options.maxEntries ? { maxEntries: options.maxEntries } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    };
    this.tokens = new ReviewCache({ ttlMs: () => tokenTtlMs, ...common });
    this.decisions = new ReviewCache({ ttlMs: (allowed) => (allowed ? allowTtlMs : denyTtlMs), ...common });
    this.log = options.logger ?? silentLogger;
  }

  /** The decision on a request with this Authorization header. */
  async check(authorization: string | undefined, request: NonResourceRequest): Promise<AccessDecision> {
    const token = bearerToken(authorization);
    if (!token) return { status: 401, message: 'Unauthorized: send a bearer token (Authorization: Bearer <token>)' };
    let user: UserInfo | null;
    try {
      user = await this.tokens.get(sha256(token), async () => (await this.reviews.authenticate(token)) ?? null);
    } catch (error) {
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
}

/** The token of an `Authorization: Bearer <token>` header (the scheme in any case, RFC 7235). */
function bearerToken(header: string | undefined): string | undefined {
  const match = /^bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
