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
