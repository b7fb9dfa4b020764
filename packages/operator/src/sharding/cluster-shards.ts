import { type RuntimeLogger, silentLogger, type Transport } from '@nestor/core';
import type { Subscription } from 'rxjs';
import type { InformerCache } from '../runtime/cache/informer-cache.js';
import type { WriteFence } from '../client/write-fence.js';
import type { ClusterPlacement, PlacedCluster } from '../runtime/controller/cluster-placement.js';
import { LeaseLock, LeaseLostError } from '../runtime/leases/leader-election.js';
import { leaseTiming, type LeaseTiming } from '../runtime/leases/lease-timing.js';
import { HashRing } from './hash-ring.js';
import { hash64 } from './hash64.js';
import { SHARD_LABEL_PREFIX, shardLabels } from './shard-labels.js';
import { ShardMembers } from './shard-members.js';

/** Labels a member cluster's Lease with its ring (not the shard Leases' ring label: these are no shards). */
export const CLUSTER_RING_LABEL = `${SHARD_LABEL_PREFIX}cluster-ring`;

export interface ClusterShardsOptions extends LeaseTiming {
  ring: string;
  /** This replica's shard id: the holder of the cluster Leases it takes. */
  shardId: string;
  /** Where the ring's Leases live. */
  namespace: string;
  tokensPerShard?: number;
  logger?: RuntimeLogger;
}

/** One placed cluster's state on this replica. */
interface Entry {
  name: string;
  cluster: PlacedCluster;
  /** The Lease campaigned for or held while the ring names this replica. */
  lock?: LeaseLock;
  campaign?: AbortController;
  /** The campaign's acquire: resolves once the Lease is held or the campaign is aborted. */
  acquiring?: Promise<void>;
  held: boolean;
  gone: boolean;
  /** The member's writes ask it: whichever Lease campaign holds the cluster now (a lapse makes a new one). */
  fence: WriteFence;
  /** Transitions run one after the other. */
  chain: Promise<void>;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The Lease of member cluster `name` in ring `ring`: readable when the name allows, unambiguous always. */
export function clusterLeaseName(ring: string, name: string): string {
  const plain = `${ring}-cluster-${name}`;
  if (DNS_LABEL.test(name) && plain.length <= 253) return plain;
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `${ring}-cluster-${slug ? `${slug}-` : ''}${hash64(name).toString(16).padStart(16, '0')}`;
}

/**
 * Member clusters spread over the shards of a ring (issue 41): a cluster belongs to the shard
 * its name hashes to among the live shards (the shard Leases, as ShardMembers sees them),
 * which engages it while it holds the cluster's own Lease `<ring>-cluster-<name>`. A rescale
 * changes the ring: the old owner disengages (its reconciles end or are aborted) and only
 * then releases the Lease, which the new owner is waiting for; a replica that died holds it
 * until it expires. The Lease fences the member's writes, so two replicas never write to one
 * cluster at once, even across a pause.
 */
export class ClusterShards implements ClusterPlacement {
  readonly shardId: string;
  private readonly entries = new Map<string, Entry>();
  private readonly members: ShardMembers;
  private readonly log: RuntimeLogger;
  private ring?: HashRing;
  private subscription?: Subscription;
  private stopped = false;

  constructor(
    private readonly transport: Transport,
    informers: InformerCache,
    private readonly options: ClusterShardsOptions,
  ) {
    shardLabels(options.ring);
    this.shardId = options.shardId;
    this.log = options.logger ?? silentLogger;
    // Passive: the leader's assigner takes the Leases of dead shards; this only reads.
    this.members = new ShardMembers(informers, {
      ring: options.ring,
      namespace: options.namespace,
      self: options.shardId,
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  start(signal: AbortSignal): void {
    if (this.subscription || this.stopped || signal.aborted) return;
    this.members.start();
    this.subscription = this.members.available$.subscribe((shards) => {
      this.ring = new HashRing(
        shards,
        this.options.tokensPerShard ? { tokensPerShard: this.options.tokensPerShard } : {},
      );
      for (const entry of this.entries.values()) this.drive(entry);
    });
  }

  holds(name: string): boolean {
    const entry = this.entries.get(name);
    return entry?.held === true && entry.lock?.isLeader === true;
  }

  shardOf(name: string): string | undefined {
    return this.ring?.shardFor(clusterKey(name));
  }

  place(name: string, cluster: PlacedCluster): void {
    if (this.entries.has(name)) return;
    const entry: Entry = {
      name,
      cluster,
      held: false,
      gone: false,
      chain: Promise.resolve(),
      fence: {
        assertWritable: () => {
          if (!entry.held || !entry.lock) {
            throw new LeaseLostError(`this replica does not hold member cluster ${name}'s Lease: the write is refused`);
          }
          entry.lock.assertWritable();
        },
      },
    };
    this.entries.set(name, entry);
    this.drive(entry);
  }

  async unplace(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.entries.delete(name);
    entry.gone = true;
    this.drive(entry);
    await entry.chain;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.subscription?.unsubscribe();
    this.members.stop();
    const entries = [...this.entries.values()];
    for (const entry of entries) entry.gone = true;
    await Promise.all(entries.map((entry) => (this.drive(entry), entry.chain)));
    this.entries.clear();
  }

  /** Whether the ring names this replica for the entry now. */
  private wanted(entry: Entry): boolean {
    return !entry.gone && !this.stopped && this.shardOf(entry.name) === this.shardId;
  }

  /** Moves the entry towards what the ring says, after the transitions queued before. */
  private drive(entry: Entry): void {
    entry.chain = entry.chain
      .then(() => (this.wanted(entry) ? this.campaign(entry) : this.letGo(entry, 'moved')))
      .catch((error: unknown) => this.log.error(`cluster ${entry.name}: ${(error as Error).message}`));
  }

  /** Campaigns for the cluster's Lease (once); engages it when held. */
  private campaign(entry: Entry): void {
    if (entry.lock) return;
    const lock = new LeaseLock(this.transport, {
      name: clusterLeaseName(this.options.ring, entry.name),
      namespace: this.options.namespace,
      identity: this.shardId,
      labels: { [CLUSTER_RING_LABEL]: this.options.ring },
      ...leaseTiming(this.options),
      logger: this.log,
    });
    const campaign = new AbortController();
    entry.lock = lock;
    entry.campaign = campaign;
    lock.onLost(() => {
      if (entry.lock !== lock || !entry.held) return;
      // The Lease may be another replica's now: stand by at once, then campaign again.
      entry.held = false;
      entry.chain = entry.chain
        .then(async () => {
          await entry.cluster.lost('lease');
          if (entry.lock === lock) {
            campaign.abort();
            entry.lock = undefined;
            await lock.release(); // not held any more: a no-op that stops its renewals
          }
        })
        .catch((error: unknown) => this.log.error(`cluster ${entry.name}: ${(error as Error).message}`));
      this.drive(entry);
    });
    entry.acquiring = lock.acquire(campaign.signal).then(() => {
      if (entry.lock !== lock || campaign.signal.aborted || !lock.isLeader) return;
      entry.held = true;
      this.log.info(`cluster ${entry.name}: placed on shard ${this.shardId}, its Lease held`);
      entry.cluster.held(entry.fence);
    });
  }

  /** Disengages the cluster (if held), then releases its Lease so that the next owner takes it. */
  private async letGo(entry: Entry, why: 'moved'): Promise<void> {
    const lock = entry.lock;
    if (!lock) return;
    entry.campaign?.abort();
    entry.lock = undefined;
    // An acquire in flight may still succeed: wait for it, so that the release below sees it.
    await entry.acquiring;
    if (entry.held) {
      entry.held = false;
      this.log.info(
        `cluster ${entry.name}: ${entry.gone ? 'no longer placed' : `moves to shard ${this.shardOf(entry.name)}`}`,
      );
      await entry.cluster.lost(why);
    }
    await lock.release();
  }
}

/** The ring key of a member cluster (apart from every object key, which names a kind). */
export function clusterKey(name: string): string {
  return `cluster:${name}`;
}
