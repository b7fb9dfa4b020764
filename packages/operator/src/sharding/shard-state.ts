import type { V1Lease } from '../client/kinds.js';

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
 * When the Lease expires: `observedAt` (when the reader saw this renewal, on its own
 * clock) plus leaseDurationSeconds, as client-go's leader election measures it, so that
 * neither clock skew nor a wall-clock step moves it; without `observedAt`, renewTime (the
 * shard's clock) plus the duration. 0 when renewTime or the duration is missing.
 */
function expiryOf(lease: V1Lease, observedAt?: number): { expiry: number; durationMs: number } {
  const renew = lease.spec?.renewTime;
  const seconds = lease.spec?.leaseDurationSeconds;
  if (!renew || !seconds) return { expiry: 0, durationMs: 0 };
  const renewedAt = Date.parse(renew);
  const durationMs = seconds * 1000;
  if (!Number.isFinite(renewedAt)) return { expiry: 0, durationMs: 0 };
  return { expiry: (observedAt ?? renewedAt) + durationMs, durationMs };
}

/**
 * The state of the shard `lease` stands for at `now`, `observedAt` being when this renewal
 * of the Lease was first seen on the same clock (else `now` is epoch ms, against
 * renewTime). A held Lease without times is uncertain.
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
