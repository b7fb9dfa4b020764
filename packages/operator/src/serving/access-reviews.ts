// The API server's verdict on a bearer token and on what its user may do, asked with the
// operator's own identity: a TokenReview (authentication.k8s.io) and a
// SubjectAccessReview (authorization.k8s.io). The operator's ClusterRole needs `create` on
// both (see manifests' metricsAuthRules).
import type { RequestOptions } from '@nestor/core';

/** Who a token belongs to, as the TokenReview says. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** What a request asks for: a verb on a non-resource URL (as /metrics, /healthz). */
export interface NonResourceRequest {
  verb: string;
  path: string;
}

export interface AccessReviews {
  /** The token's user, or undefined when the API server does not accept the token. */
  authenticate(token: string): Promise<UserInfo | undefined>;
  /** Whether the user may make the request. */
  authorize(user: UserInfo, request: NonResourceRequest): Promise<boolean>;
}

/** The part of core's Transport the reviews use. */
export interface ReviewTransport {
  json<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
}

interface TokenReview {
  status?: { authenticated?: boolean; user?: UserInfo; error?: string };
}

interface SubjectAccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

/** As controller-runtime's filter: a review that takes longer fails the scrape. */
const REVIEW_TIMEOUT_MS = 10_000;

/** The reviews, asked of the API server through the operator's transport. */
export function apiServerReviews(transport: ReviewTransport): AccessReviews {
  return {
    async authenticate(token) {
      const review = await transport.json<TokenReview>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        timeoutMs: REVIEW_TIMEOUT_MS,
      });
      const user = review.status?.user;
      return review.status?.authenticated && user?.username ? user : undefined;
    },
    async authorize(user, request) {
      const review = await transport.json<SubjectAccessReview>(
        'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: user.username,
              ...(user.uid ? { uid: user.uid } : {}),
              ...(user.groups ? { groups: user.groups } : {}),
              ...(user.extra ? { extra: user.extra } : {}),
              nonResourceAttributes: { path: request.path, verb: request.verb },
            },
          },
          timeoutMs: REVIEW_TIMEOUT_MS,
        },
      );
      return review.status?.allowed === true;
    },
  };
}
