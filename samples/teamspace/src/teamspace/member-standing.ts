// How a member cluster stands in the fleet, as the TeamSpace's status says it when nothing
// can be written there now. No need to look again later: the fleet tells each change of a
// member (fleet.engagements$), which reconciles the TeamSpaces that select it.
import type { MemberStatus } from '@nestor/operator/fleet';
import type { ClusterPlacement } from './teamspace.resource.js';

/** What one cluster's reconcile came to: its status entry, and whether and when to look again. */
export interface ClusterOutcome extends ClusterPlacement {
  /** Reconcile again after this long: the cluster may be writable then. */
  retryAfterMs?: number;
  /** A write failed: the reconcile fails too, and is retried with backoff. */
  failed?: boolean;
}

export const NOT_IN_FLEET = 'not in the fleet: no kubeconfig Secret names this cluster';

/** Why nothing can be written to the cluster now, or undefined when it is engaged and answering. */
export function notWritable(name: string, member: MemberStatus | undefined): ClusterOutcome | undefined {
  // A member that comes later is told when the fleet names it.
  if (!member) return { name, ready: false, message: NOT_IN_FLEET };
  switch (member.phase) {
    case 'engaged':
      if (!member.held) return undefined;
      return { name, ready: false, message: 'its API server does not answer: waiting' };
    case 'connecting': {
      const last = member.error ? ` (last attempt: ${clip(member.error)})` : '';
      return { name, ready: false, message: `connecting${last}` };
    }
    default:
      return { name, ready: false, message: `not engaged: ${clip(member.error ?? member.phase)}` };
  }
}

/** Status messages stay short: an API server's answer can be long. */
export function clip(message: string, max = 400): string {
  return message.length > max ? `${message.slice(0, max - 1)}…` : message;
}
