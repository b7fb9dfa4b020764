import type { V1Lease } from '@kubernetes/client-node';

/**
 * A shard's state, from its Lease (timebertt's states):
 * - `ready`: held by the shard (holder = Lease name) and renewed within its duration;
 * - `expired`: not renewed for up to one more duration (a slow renewal, or a crash);
 * - `uncertain`: past twice the duration; the assigner takes the Lease to make it dead;
 * - `dead`: released (graceful stop) or taken by the assigner: holder ≠ name.
 * Only dead shards leave the ring: a shard that merely missed renewals keeps its objects
 * until the assigner, which has just proved it reaches the API server, declares it dead.
 */
export type ShardState = 'ready' | 'expired' | 'uncertain' | 'dead';

/** True for the states whose shard is in the ring. */
export function isAvailable(state: ShardState): boolean {
  return state !== 'dead';
}

/** The shard id a Lease stands for: its name. */
export function shardIdOf(lease: V1Lease): string {
  return lease.metadata?.name ?? '';
}

/**
 * When the Lease expires, in epoch ms on the reader's clock: from the later of its
 * renewTime (written on the shard's clock) and `observedAt`, when the reader saw this
 * version of it, plus leaseDurationSeconds (0 when renewTime or the duration is missing).
 * Measuring from what the reader saw is what client-go's leader election does: a shard
 * whose clock runs behind the leader's is not declared expired while it still renews.
 */
function expiryOf(lease: V1Lease, observedAt = -Infinity): { expiry: number; durationMs: number } {
  const renew = lease.spec?.renewTime;
  const seconds = lease.spec?.leaseDurationSeconds;
  if (!renew || !seconds) return { expiry: 0, durationMs: 0 };
  const renewedAt = renew instanceof Date ? renew.getTime() : Date.parse(String(renew));
  const durationMs = seconds * 1000;
  return Number.isFinite(renewedAt)
    ? { expiry: Math.max(renewedAt, observedAt) + durationMs, durationMs }
    : { expiry: 0, durationMs: 0 };
}

/**
 * The state of the shard `lease` stands for at `now` (epoch ms), `observedAt` being when
 * this version of the Lease was first seen. A held Lease without times is uncertain.
 */
export function shardState(lease: V1Lease, now: number, observedAt?: number): ShardState {
  const holder = lease.spec?.holderIdentity;
  if (!holder || holder !== shardIdOf(lease)) return 'dead';
  const { expiry, durationMs } = expiryOf(lease, observedAt);
  if (now < expiry) return 'ready';
  if (now < expiry + durationMs) return 'expired';
  return 'uncertain';
}

/**
 * When (epoch ms) the state of `lease` changes next without a write, or undefined if it
 * does not: expiry makes no watch event, so watchers set a timer for it.
 */
export function nextTransition(lease: V1Lease, now: number, observedAt?: number): number | undefined {
  const holder = lease.spec?.holderIdentity;
  if (!holder || holder !== shardIdOf(lease)) return undefined;
  const { expiry, durationMs } = expiryOf(lease, observedAt);
  if (now < expiry) return expiry;
  if (now < expiry + durationMs) return expiry + durationMs;
  return undefined;
}
