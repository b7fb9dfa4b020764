// Every default of Nestor, in one place: the client, the runtime, the Nest module and the
// docs take them from here.

/** Reconciles running at once across all controllers. */
export const DEFAULT_CONCURRENCY = 16;
/** How long running reconciles may take to finish on stop. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
/** Bound on the wait for the caches' first sync (as controller-runtime's CacheSyncTimeout). */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000;
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
 * How deep an object from outside may nest (objects and arrays inside each other) before a
 * decoder or webhook refuses it, saying which object: far past any real schema (a CRD's own
 * schema nests a few dozen levels), and shallow enough that the recursive code every
 * handler runs (copies, diffs, JSON.stringify) stays inside Node's stack. The protobuf
 * decoders, the admission and conversion webhooks all apply it.
 */
export const MAX_OBJECT_DEPTH = 1000;
