// Every default of Nestor, in one place: the client, the runtime, the Nest module and the
// docs take them from here.

/** The name of the cluster a manager makes from its own transport (the management cluster, with a fleet). */
export const DEFAULT_CLUSTER_NAME = 'default';
/** Reconciles running at once across all controllers. */
export const DEFAULT_CONCURRENCY = 16;
/** How long running reconciles may take to finish on stop. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
/** Bound on the wait for the caches' first sync (as controller-runtime's CacheSyncTimeout). */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000;
/**
 * Bound on the wait, before a reconcile, for the informers that may serve its reads to reach
 * the resourceVersion of the event that queued it (another informer of the same kind,
 * behind the one that saw it): two watches of one API server are milliseconds apart, a
 * relisting one seconds. Past the bound the key is retried with backoff, never run on an
 * object older than its event.
 */
export const DEFAULT_CACHE_CATCH_UP_MS = 5_000;
/** Reconciles of one controller at once. */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 1;
/** Field manager of server-side apply and writes. */
export const DEFAULT_FIELD_MANAGER = 'nestor';
/**
 * A watch that received nothing, bookmarks included, for this long is reconnected: the
 * API server sends a bookmark about every minute on an idle watch (59.2 s measured on
 * v1.37), so silence past 70 s means a connection that died without closing (a NAT or load
 * balancer that dropped it). client-go waits for the watch timeout (5 to 10 minutes).
 */
export const DEFAULT_WATCH_STALL_MS = 70_000;
/**
 * Watches ask the server to end them after a random [25, 50) s (client-go: [300, 600) s),
 * so a watch on a connection that died without closing is noticed within a minute: the
 * server's end, or a bookmark, never comes, and the watch is reconnected 10 s after the
 * end was due. Reconnecting resumes from the last resourceVersion (no relist): one small
 * request per informer every ~40 s.
 */
export const DEFAULT_MIN_WATCH_TIMEOUT_SECONDS = 25;
/**
 * Over HTTP/2 the connection's PING finds a dead connection (5 s of silence, 10 s for the
 * answer), so watches last as long as client-go's reflector asks: a random [300, 600) s,
 * one request per informer every ~7.5 minutes instead of every ~40 s.
 */
export const DEFAULT_HTTP2_MIN_WATCH_TIMEOUT_SECONDS = 300;
/**
 * HTTP/1.1 sockets, watches' included, have TCP keepalive: the kernel probes a socket that
 * has been silent for 5 s, once a second (libuv's interval), and fails it after 10 probes
 * without an answer, so a connection a NAT or load balancer dropped is found within 15 s
 * with nothing sent by the program (Node's agents default to a probe after every idle
 * second). A middlebox that keeps answering TCP and forwards nothing is found by the watch's
 * overdue end instead (DEFAULT_MIN_WATCH_TIMEOUT_SECONDS).
 */
export const DEFAULT_TCP_KEEPALIVE_MS = 5_000;
/**
 * How deep an object from outside may nest (objects and arrays inside each other) before a
 * decoder or webhook refuses it, saying which object: far past any real schema (a CRD's own
 * schema nests a few dozen levels), and shallow enough that the recursive code every
 * handler runs (copies, diffs, JSON.stringify) stays inside Node's stack. The protobuf
 * decoders, the admission and conversion webhooks all apply it.
 */
export const MAX_OBJECT_DEPTH = 1000;
/**
 * The secure /metrics endpoint's answers from the API server are kept this long: a
 * TokenReview that accepted the token and a SubjectAccessReview that allowed its user
 * for 1 minute (controller-runtime's token TTL), a refusal of either for 10 s (a newly
 * bound scraper gets in soon; a wrong token sent again costs one review per 10 s).
 */
export const METRICS_REVIEW_APPROVAL_TTL_MS = 60_000;
export const METRICS_REVIEW_REFUSAL_TTL_MS = 10_000;
/**
 * Bound on the approvals kept, and apart from them on the refusals kept, by the /metrics
 * endpoint: a flood of refused tokens pushes out other refusals, never an approval.
 */
export const METRICS_REVIEW_CACHE_ENTRIES = 1024;
/**
 * TokenReviews for tokens the /metrics endpoint has not approved before: at most this many
 * a second, in bursts up to METRICS_TOKEN_REVIEW_BURST; a request beyond is answered 429
 * with Retry-After, without asking the API server. A few scrapers (a Prometheus pair, an
 * agent per node restarted together) fit in the burst; a flood of made-up tokens costs the
 * API server 10 reviews a second, the rate of client-go's default client-side limit
 * (QPS 5, burst 10) to within a factor of two. A token approved before is reviewed again
 * when its approval expires without waiting for the limit, so the flood cannot lock out a
 * scraper that was let in.
 */
export const METRICS_TOKEN_REVIEWS_PER_SECOND = 10;
export const METRICS_TOKEN_REVIEW_BURST = 20;
/**
 * Where the webhook server reads its certificate (tls.crt and tls.key), and where the
 * Deployment `nestor manifests` writes mounts cert-manager's Secret: controller-runtime's.
 */
export const DEFAULT_WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';
