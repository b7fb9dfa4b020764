// The RBAC that secure metrics serving needs (serving/metrics-and-probes-server.ts), as
// controller-runtime's WithAuthenticationAndAuthorization filter documents it and
// kubebuilder's scaffold ships it. Self-contained: no import, so it moves as one file.

/** The rules the operator's own identity needs to check callers of /metrics. */
export function metricsAuthRules(): Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> {
  return [
    // Who is the caller? A TokenReview of its bearer token.
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    // May it `get /metrics`? A SubjectAccessReview for its user.
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ];
}

/**
 * The ClusterRole a scraper needs to read /metrics (kubebuilder's `metrics-reader`): bind
 * it to Prometheus' ServiceAccount with a ClusterRoleBinding.
 */
export function metricsReaderRole(
  name: string,
  labels: Record<string, string> = {},
): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  rules: Array<{ nonResourceURLs: string[]; verbs: string[] }>;
} {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, ...(Object.keys(labels).length ? { labels } : {}) },
    rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
  };
}
