// What the operator's listening sockets take: the metrics and probe ports, the webhook
// server. OperatorModule's options and the Nest-free servers share these shapes.

/** Where /metrics is served, and how it is secured. */
export interface MetricsServerOptions {
  /** Default 8443 (8080 with `secure: false`), kubebuilder's; 0 turns /metrics off. */
  port?: number;
  /** Address to listen on (default 0.0.0.0: Prometheus scrapes the pod IP). */
  host?: string;
  /**
   * HTTPS (default true). `false` serves plain HTTP without authentication, for development
   * or behind a proxy that authenticates (anyone who reaches the port reads the metrics).
   */
  secure?: boolean;
  /**
   * Authenticate each caller with a TokenReview and authorize it with a SubjectAccessReview
   * for `get` on /metrics (default: on when secure; needs HTTPS). The operator's identity
   * needs `create` on tokenreviews and subjectaccessreviews, as `nestor manifests` grants.
   */
  auth?: boolean;
  /**
   * A directory with the serving certificate and key (e.g. a mounted cert-manager Secret),
   * read again when they change. Default: a self-signed certificate made at start-up.
   */
  certDir?: string;
  /** File names in certDir (default tls.crt and tls.key). */
  certName?: string;
  keyName?: string;
}

/** Where the kubelet probes (/healthz, /readyz) are served. */
export interface HealthServerOptions {
  /** Default 8081; 0 turns the probes off. It may equal the metrics port only when metrics are plain HTTP. */
  port?: number;
  /** Address to listen on (default 0.0.0.0: the kubelet probes the pod IP). */
  host?: string;
}

/** The webhook HTTPS server's settings (`OperatorModule`'s `webhooks` adds `inheritAppConfig`). */
export interface WebhookServingOptions {
  /** Default 9443; 0 turns the webhook server off. */
  port?: number;
  /** Address to listen on (default 0.0.0.0: the API server calls the pod IP through a Service). */
  host?: string;
  /**
   * The directory with the serving certificate and key (default
   * /tmp/k8s-webhook-server/serving-certs, where kubebuilder's Deployment mounts cert-manager's
   * Secret), read again when they change. The API server trusts it through the
   * configurations' caBundle.
   */
  certDir?: string;
  /** File names in certDir (default tls.crt and tls.key). */
  certName?: string;
  keyName?: string;
  /** Larger request bodies get HTTP 413 (default 7 MiB, as controller-runtime: twice the API server's 3 MiB object limit, plus 1 MiB). */
  maxBodyBytes?: number;
  /**
   * Reviews read or answered at once (default 64); more get HTTP 429 with Retry-After, which
   * the API server retries within the webhook's timeout. Bounds the memory reviews take.
   */
  maxReviewsInFlight?: number;
  /** Body bytes held by all reviews in flight together (default 64 MiB); past it, HTTP 503 with Retry-After. */
  maxBodyBytesInFlight?: number;
  /**
   * Objects and arrays in one review (default 250,000), counted as the body arrives: a
   * review with more is refused unparsed (denied, or `Failure` for a conversion), as it
   * would take far more memory than its size. Nesting deeper than 1,000 is refused the same way.
   */
  maxReviewContainers?: number;
  /**
   * Values and object keys in one review (default 1,000,000), containers included, counted
   * as the body arrives: a review with more is refused unparsed like one with too many
   * containers. Each costs 8 to ~50 bytes once parsed; a flat array of 3.5 million numbers
   * fits under the body cap.
   */
  maxReviewValues?: number;
  /**
   * Values and keys held by all reviews in flight together (default 2,000,000; one remote
   * address half of it), counted as bodies arrive; past it, HTTP 503 with Retry-After.
   */
  maxReviewValuesInFlight?: number;
  /**
   * A review's body not whole this long after its headers is answered 408 and dropped: the
   * connection closed (HTTP/2: the stream reset) within a second of it (default 30 s, the
   * longest the API server waits for any review). Also Node's deadline for a whole HTTP/1.1
   * request (at least 10 s, the headers timeout).
   */
  bodyTimeoutMs?: number;
  /** A review's body that sends nothing for this long is answered 408 and dropped the same way (default 10 s). */
  bodyIdleTimeoutMs?: number;
  /**
   * Where the serving certificate comes from. 'files' (default): certDir, where cert-manager's
   * Secret is mounted and its cainjector fills the caBundles. 'self-managed': the operator
   * keeps a CA and a certificate in a Secret of its namespace, renews them, and patches the
   * caBundle of its webhook configurations and CRD conversions (see `selfManaged`); /readyz
   * waits for the patch. `--webhook-certificates` / `WEBHOOK_CERTIFICATES` set it too.
   */
  certificates?: 'files' | 'self-managed';
  /** The self-managed mode's names; the defaults are kubebuilder's, `nestor manifests` sets them in the Deployment. */
  selfManaged?: SelfManagedCertificateOptions;
  /**
   * Offer HTTP/2 by ALPN beside HTTP/1.1 (default false, as kubebuilder's scaffold since
   * the HTTP/2 rapid-reset advisories). kube-apiserver calls a webhook over HTTP/1.1
   * unless it negotiates HTTP/2; measured in docs/BENCHMARKS.md ("Webhooks").
   */
  http2?: boolean;
}

/** The webhook server's own CA and certificate, kept in a Secret, and the configurations whose caBundle it patches. */
export interface SelfManagedCertificateOptions {
  /** The Secret holding the CA and the certificate (default 'webhook-server-cert', as kubebuilder's; env WEBHOOK_SECRET_NAME). */
  secretName?: string;
  /** Its namespace (default: POD_NAMESPACE, the in-cluster namespace, the module's namespace, else 'default'). */
  namespace?: string;
  /**
   * The webhook Service (default 'webhook-service'; env WEBHOOK_SERVICE_NAME): the certificate
   * names `<service>.<namespace>.svc` and `<service>.<namespace>.svc.cluster.local`.
   */
  serviceName?: string;
  /** More names for the certificate: the host of a `url` clientConfig (a test's 127.0.0.1). */
  hosts?: string[];
  /**
   * The Validating and MutatingWebhookConfiguration whose caBundle is patched, for the types
   * the application serves (default 'nestor-webhooks', as webhookConfigurationsOf; env
   * WEBHOOK_CONFIGURATION_NAME). It must be the `name` given to `webhookConfigurationsOf`
   * (and `nestor manifests` sets both to `<name>-webhooks`): the operator patches only this
   * one, and is not ready (its log says why) while that one does not exist.
   */
  configurationName?: string;
  /**
   * More CRDs (`<plural>.<group>`) whose `spec.conversion.webhook` caBundle is patched, when
   * their strategy is Webhook, beyond those of the `@Conversion` classes, which always are
   * (env WEBHOOK_CONVERSION_CRDS, comma-separated).
   */
  conversionCustomResourceDefinitions?: string[];
  /** Serving certificate lifetime (default one year), renewed when a third of it is left. */
  validityMs?: number;
  renewBeforeMs?: number;
  /** CA lifetime (default ten years); a new CA joins the bundle before the old one would expire. */
  caValidityMs?: number;
  /** How often the Secret and the caBundles are checked again (default 5 minutes). */
  checkIntervalMs?: number;
}
