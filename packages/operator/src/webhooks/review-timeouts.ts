// A review body's deadlines, apart from the intake that applies them (review-intake.ts): the
// webhook server checks its options against them when made, and loads the intake at start.

/** A body that sends nothing for this long is dropped with 408 (default 10 s). */
export const DEFAULT_BODY_IDLE_TIMEOUT_MS = 10_000;
/** A body not whole after this long is dropped with 408 (default 30 s, the longest any review waits for its answer). */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;
