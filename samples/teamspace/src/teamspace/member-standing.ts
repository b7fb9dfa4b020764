// How a member cluster stands in the fleet, as the TeamSpace's status says it when nothing
// can be written there now, and when to look again. The fleet engages members in the
// background and tells a cluster-aware reconciler nothing when one is engaged: a TeamSpace
// waiting on one is reconciled again after a short while instead.
import type { MemberStatus } from '@nestor/operator/fleet';
import type { ClusterPlacement } from './teamspace.resource.js';

/** What one cluster's reconcile came to: its status entry, and whether and when to look again. */
export interface ClusterOutcome extends ClusterPlacement {
  /** Reconcile again after this long: the cluster may be writable then. */
  retryAfterMs?: number;
  /** A write failed: the reconcile fails too, and is retried with backoff. */
  failed?: boolean;
}

/** A member being engaged is usually engaged within seconds. */
export const CONNECTING_RETRY_MS = 2_000;
/** A member whose API server stopped answering: its own outage gate retries. */
export const HELD_RETRY_MS = 5_000;
/** A member that failed to engage: the fleet retries it with backoff up to a minute. */
export const FAILED_RETRY_MS = 15_000;

export const NOT_IN_FLEET = 'not in the fleet: no kubeconfig Secret names this cluster';

/** Why nothing can be written to the cluster now, or undefined when it is engaged and answering. */
export function notWritable(name: string, member: MemberStatus | undefined): ClusterOutcome | undefined {
  // A Secret that comes later is watched: it reconciles the TeamSpaces that name its cluster.
  if (!member) return { name, ready: false, message: NOT_IN_FLEET };
  switch (member.phase) {
    case 'engaged':
      if (!member.held) return undefined;
      return { name, ready: false, message: 'its API server does not answer: waiting', retryAfterMs: HELD_RETRY_MS };
    case 'connecting': {
      const last = member.error ? ` (last attempt: ${clip(member.error)})` : '';
      return { name, ready: false, message: `connecting${last}`, retryAfterMs: CONNECTING_RETRY_MS };
    }
    default:
      return {
        name,
        ready: false,
        message: `not engaged: ${clip(member.error ?? member.phase)}`,
        retryAfterMs: FAILED_RETRY_MS,
      };
  }
}

/** Status messages stay short: an API server's answer can be long. */
export function clip(message: string, max = 400): string {
  return message.length > max ? `${message.slice(0, max - 1)}…` : message;
}
