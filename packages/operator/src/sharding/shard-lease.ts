import type { RuntimeLogger, Transport } from '@nestor/core';
import { LeaseLock } from '../runtime/leases/leader-election.js';
import { leaseTiming, type LeaseTiming } from '../runtime/leases/lease-timing.js';
import { assertShardId, RING_LABEL, shardLabels } from './shard-labels.js';

export interface ShardLeaseOptions extends LeaseTiming {
  /** The ring this shard belongs to (the name in its labels). */
  ring: string;
  /**
   * This replica's shard id: the Lease's name and holder, and the shard label's value.
   * Stable across restarts (a StatefulSet pod name) lets a restarted shard take its Lease
   * back at once; a new id (a Deployment's pod) moves its objects.
   */
  shardId: string;
  /** The namespace of the ring's Leases (usually the operator's own). */
  namespace: string;
  logger?: RuntimeLogger;
}

/** A Lease name is a DNS subdomain: lower-case alphanumerics, '-' and '.', ≤ 253 chars. */
const LEASE_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * One replica's membership in a ring: it holds the Lease named after its shard id,
 * labelled `shard.nestor.dev/ring=<ring>`, renewed as leader election renews (the same
 * `LeaseLock`, with the shard id as both name and holder). Holding it is what makes the
 * shard available to the assigner; `stop()` releases it so the shard is dead at once.
 */
export class ShardLease {
  readonly shardId: string;
  readonly ring: string;
  private readonly lock: LeaseLock;

  constructor(transport: Transport, options: ShardLeaseOptions) {
    assertShardId(options.shardId);
    if (!LEASE_NAME.test(options.shardId)) {
      throw new Error(
        `invalid shard id "${options.shardId}": it names the shard's Lease, so it must be lower-case letters, ` +
          'digits, "-" and "." (a DNS subdomain) as well as a label value',
      );
    }
    shardLabels(options.ring);
    this.shardId = options.shardId;
    this.ring = options.ring;
    this.lock = new LeaseLock(transport, {
      name: options.shardId,
      identity: options.shardId,
      namespace: options.namespace,
      labels: { [RING_LABEL]: options.ring },
      ...leaseTiming(options),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  /** True while this replica holds its Lease (renewed within the renew deadline). */
  get held(): boolean {
    return this.lock.isLeader;
  }

  /**
   * Resolves once the Lease is held (at once unless another holder's record is still
   * valid, e.g. the assigner took it after a crash), or when `signal` aborts.
   */
  start(signal: AbortSignal): Promise<void> {
    return this.lock.acquire(signal);
  }

  /** Called when renewals failed past the renew deadline: the shard must stop reconciling. */
  onLost(listener: () => void): void {
    this.lock.onLost(listener);
  }

  /** Throws `LeaseLostError` unless the Lease is surely still this shard's (a `WriteFence` for its writes). */
  assertWritable(): void {
    this.lock.assertWritable();
  }

  /** Releases the Lease: the holder is cleared, so the shard is dead for the assigner at once. */
  stop(): Promise<void> {
    return this.lock.release();
  }
}
