import { type RuntimeLogger, silentLogger, sleep } from '@nestor/core';
import type { LeaderElection, LeaseLoss } from '../leases/leader-election.js';
import type { ShardingHooks } from '../controller/sharding-hooks.js';
import { LeaseFence } from '../leases/lease-fence.js';

export type { LeaderElection };

/** What the coordinator tells its owner (the manager) as the Leases come and go. */
export interface CoordinationEvents {
  /** This replica leads (at once without leader election): run the leader's controllers. */
  led(): void;
  /** The lead was lost: stand the leader's controllers by; resolves once they stopped. */
  lostLead(loss: LeaseLoss): Promise<void>;
  /** This replica holds its shard Lease: run the sharded controllers. */
  heldShard(): void;
  /** The shard Lease was lost: stand the sharded controllers by; resolves once they stopped. */
  lostShard(): Promise<void>;
}

export interface LeaseLoopsOptions {
  leaderElection?: LeaderElection;
  sharding?: ShardingHooks;
  /** True for a controller that runs on the leader (`sharded: false`): its writes need the leader Lease. */
  runsOnLeader(controller: string): boolean;
  logger?: RuntimeLogger;
}

/**
 * The Lease loops: the leader Lease (campaign, lead, lose, campaign again), this replica's
 * shard Lease, and the assigner while leading; and the write fence those Leases make. The
 * manager starts it as its caches start syncing (once they are, when sharded) and stops it
 * after its controllers drained.
 * @internal
 */
export class LeaseLoops {
  /** What every write asks first (see LeaseFence): the Lease of whoever writes. */
  readonly fence: LeaseFence;
  private readonly log: RuntimeLogger;
  private readonly abort = new AbortController();
  private campaigning?: Promise<void>;
  private holding?: Promise<void>;
  private assigning?: { abort: AbortController; done: Promise<void> };
  private leading = false;
  private shardHeld = false;

  constructor(private readonly options: LeaseLoopsOptions) {
    if (options.sharding && !options.leaderElection) {
      throw new Error('sharding needs leader election: the elected leader assigns the objects to the shards');
    }
    this.log = options.logger ?? silentLogger;
    this.fence = new LeaseFence({
      leader: options.leaderElection,
      shard: options.sharding?.membership,
      runsOnLeader: options.runsOnLeader,
    });
  }

  /** True while this replica leads (always once started, without leader election). */
  get isLeader(): boolean {
    return this.leading;
  }

  /** True while this replica holds its shard Lease (never without sharding). */
  get holdsShard(): boolean {
    return this.shardHeld;
  }

  /**
   * Without leader election: leads at once. With it: campaigns in the background, and
   * holds the shard Lease in the background when sharded.
   */
  start(events: CoordinationEvents): void {
    const { leaderElection: election, sharding } = this.options;
    if (!election) {
      this.leading = true;
      events.led();
      return;
    }
    if (sharding) this.holding = this.holdShard(sharding, events);
    this.log.info('waiting to become the leader');
    this.campaigning = this.campaign(election, events);
  }

  /** Takes no Lease any more and calls no event (stop()'s first half, before the drain). */
  halt(): void {
    this.abort.abort();
  }

  /**
   * Stops the assigner, waits for the loops, and releases the Leases: the shard's first
   * (released, the shard is dead at once and the leader moves its objects), the leader's last.
   */
  async stop(): Promise<void> {
    this.halt();
    await this.stopAssigning();
    await this.campaigning;
    await this.holding;
    this.shardHeld = false;
    await this.options.sharding?.membership.release();
    await this.options.leaderElection?.release();
    this.leading = false;
  }

  private holdShard(sharding: ShardingHooks, events: CoordinationEvents): Promise<void> {
    return this.holdLease(sharding.membership, `shard ${sharding.shardId}: taking its Lease`, {
      acquired: () => {
        this.shardHeld = true;
        events.heldShard();
      },
      lost: async () => {
        this.shardHeld = false;
        this.log.error(`shard ${sharding.shardId} lost its Lease: aborting its reconciles at once and taking it again`);
        await events.lostShard();
      },
    });
  }

  /** Leads while the leader Lease is held (the assigner too, when sharded); campaigns again on loss. */
  private campaign(election: LeaderElection, events: CoordinationEvents): Promise<void> {
    return this.holdLease(election, 'leader election', {
      acquired: () => {
        this.leading = true;
        events.led();
        const sharding = this.options.sharding;
        if (sharding) {
          const abort = new AbortController();
          const leading = this.fence.leading;
          const assertLeading = leading ? () => leading.assertWritable() : undefined;
          this.assigning = { abort, done: sharding.assign(abort.signal, assertLeading) };
        }
      },
      lost: async (loss) => {
        this.leading = false;
        this.log.error('this replica lost the lease: aborting its reconciles at once and standing by');
        await this.stopAssigning();
        await events.lostLead(loss);
      },
    });
  }

  /**
   * Takes a lease, runs `acquired`, and when the lease is lost runs `lost` and takes it
   * again, until halted (stop() drains what runs then; `lost` is not called).
   */
  private async holdLease(
    election: LeaderElection,
    what: string,
    on: { acquired: () => void; lost: (loss: LeaseLoss) => Promise<void> },
  ): Promise<void> {
    const signal = this.abort.signal;
    let lost: (() => void) | undefined;
    let loss: LeaseLoss = { unreachable: false };
    election.onLost((why?: LeaseLoss) => {
      loss = why ?? { unreachable: false };
      if (lost) return lost();
      // Between holds: the verdict on a lease that lapsed unreachable (another replica took it).
      if (!signal.aborted) void on.lost(loss);
    });
    while (!signal.aborted) {
      try {
        await election.acquire(signal);
      } catch (error) {
        this.log.error(`${what} failed: ${(error as Error).message}; trying again`);
        await sleep(1000, signal);
        continue;
      }
      if (signal.aborted) return;
      let stopped = () => {};
      const lease = new Promise<void>((resolve) => {
        lost = resolve;
        stopped = () => resolve();
        signal.addEventListener('abort', stopped, { once: true });
      });
      on.acquired();
      await lease;
      lost = undefined;
      signal.removeEventListener('abort', stopped); // one listener per hold, not one per loss
      if (signal.aborted) return;
      await on.lost(loss);
    }
  }

  private async stopAssigning(): Promise<void> {
    const assigning = this.assigning;
    this.assigning = undefined;
    assigning?.abort.abort();
    await assigning?.done;
  }
}
