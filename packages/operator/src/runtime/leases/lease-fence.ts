import { currentRun } from '../../client/run-context.js';
import type { WriteFence } from '../../client/write-fence.js';

/** A Lease that fences writes: LeaseLock and the shard's Lease. */
export interface FencingLease {
  /** Throws unless this replica may write now (see LeaseLock.assertWritable). */
  assertWritable?(): void;
}

export interface LeaseFenceOptions {
  /** The leader Lease (leader election), if any. */
  leader?: FencingLease | undefined;
  /** This replica's shard Lease (sharding), if any. */
  shard?: FencingLease | undefined;
  /** True for a controller that runs on the leader (`sharded: false`) rather than on the shard. */
  runsOnLeader(controller: string): boolean;
}

const open: WriteFence = { assertWritable: () => {} };

/**
 * The one definition of which Lease a write needs. Without sharding: the leader Lease, for
 * every write. With sharding: the leader Lease for a `sharded: false` controller's writes,
 * the shard's Lease for every other write, those made outside any controller included.
 * Without leader election nothing is fenced.
 *
 * `of(controller)` is the explicit path (the client a reconcile gets, the Event recorder);
 * `assertWritable()` reads the controller from the run the caller belongs to (the shared
 * client in a user's nested helper) and asks `of` for it. Outside any run it does not guess:
 * when a Lease fences writes it refuses (WriteOutsideRunError), as a write there may be a
 * controller's that outlived its run or a start-up hook's that no Lease covers.
 *
 * The window between the check and the request: the check passes while the last renewal
 * was sent at most renewDeadline ago (monotonic clock). Another replica takes the Lease no
 * sooner than leaseDuration after it saw that renewal, so a write that passed the check
 * cannot meet another replica's if the API server applies it within leaseDuration minus the
 * Lease's age at the check: at least leaseDuration - renewDeadline, 5 s with the defaults
 * (15 s / 10 s), 2 s for the chaos suite's replicas (6 s / 4 s), provided both monotonic
 * clocks run at about the same rate (client-go's assumption too). A write applied later than
 * that (a stalled connection, a slow etcd; its deadline is 60 s) may land after another
 * replica took over: only a precondition on the resourceVersion read (an update carrying
 * it) catches that; a patch or an apply without one does not.
 * @internal
 */
export class LeaseFence implements WriteFence {
  /** The leader Lease's fence (undefined without one): the assigner's writes need it. */
  readonly leading: WriteFence | undefined;
  private readonly shard: WriteFence | undefined;

  constructor(private readonly options: LeaseFenceOptions) {
    this.leading = fenceOf(options.leader);
    this.shard = fenceOf(options.shard);
  }

  /** True when some Lease fences writes (leader election is on). */
  get fences(): boolean {
    return this.leading !== undefined || this.shard !== undefined;
  }

  of(controller: string | undefined): WriteFence {
    if (!this.options.shard) return this.leading ?? open;
    const leader = controller !== undefined && this.options.runsOnLeader(controller);
    return (leader ? this.leading : this.shard) ?? open;
  }

  assertWritable(): void {
    const run = currentRun();
    if (run) this.of(run.controller).assertWritable();
    else if (this.fences) throw new WriteOutsideRunError();
  }
}

/**
 * The injected client (`manager.client`) was asked to write outside any reconcile or timer
 * run while leader election is on: which Lease fences the write is unknown, so it is refused
 * rather than guessed.
 */
export class WriteOutsideRunError extends Error {
  override readonly name = 'WriteOutsideRunError';
  constructor() {
    super(
      'the injected KubeClient (manager.client) refused a write made outside any reconcile or timer run: with leader ' +
        'election on it cannot tell which Lease fences it. Write from the reconcile with its client (ctx.client in Nest, ' +
        "request.client without), or say whose write it is: kube.scoped({ controller: '<controller name>' }), or " +
        'kube.scoped({}) for a write of no controller (fenced by the leader Lease, or the shard Lease when sharded)',
    );
  }
}

function fenceOf(lease: FencingLease | undefined): WriteFence | undefined {
  return lease?.assertWritable ? { assertWritable: () => lease.assertWritable!() } : undefined;
}
