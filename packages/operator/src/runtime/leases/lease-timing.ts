/**
 * How a Lease is held, with client-go's leaderelection semantics: the leader election Lease
 * and the shard Leases take the same three durations (defaults as controller-runtime).
 */
export interface LeaseTiming {
  /** How long a Lease is valid without renewal (default 15 s; whole seconds on the wire). */
  leaseDurationMs?: number;
  /** How long the holder keeps trying to renew before it gives up (default 10 s). */
  renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew (default 2 s). */
  retryPeriodMs?: number;
}

const FIELDS = ['leaseDurationMs', 'renewDeadlineMs', 'retryPeriodMs'] as const;

/**
 * The timing fields set in the first of `layers` that sets each, without the unset ones
 * (optional properties are exact: an undefined field may not be passed on).
 */
export function leaseTiming(...layers: ReadonlyArray<LeaseTiming | undefined>): LeaseTiming {
  const timing: LeaseTiming = {};
  for (const field of FIELDS) {
    const value = layers.find((layer) => layer?.[field] !== undefined)?.[field];
    if (value !== undefined) timing[field] = value;
  }
  return timing;
}
