// What every write of the client and the Event recorder asks first. Below the runtime: the
// manager's Leases implement it (runtime/write-fence.ts), the client only calls it.

/** Checked before every write: throws when this replica must not write (with leader election: its lease may have expired). */
export interface WriteFence {
  /**
   * The ambient check: for the write of whatever run the calling code belongs to (see
   * currentRun). The manager's fence refuses a write made outside any run when it cannot
   * tell which Lease applies.
   */
  assertWritable(): void;
  /**
   * The fence of one controller's writes, when which Lease applies depends on whose write
   * it is (sharding: the leader's Lease for a `sharded: false` controller, the shard's for
   * the others). `undefined`: a write made outside any controller. Without it,
   * assertWritable() applies to every write.
   */
  of?(controller: string | undefined): WriteFence;
}

/** The fence of `controller`'s writes: by name when `fence` tells controllers apart, else `fence` itself. */
export function fenceOf(fence: WriteFence, controller: string | undefined): WriteFence {
  return fence.of ? fence.of(controller) : fence;
}
