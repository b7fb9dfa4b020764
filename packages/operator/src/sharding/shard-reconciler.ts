import type { KubeObject, ResourceDescriptor, Transport } from '@nestor/core';
import type { Reconciler } from '../runtime/reconciler.js';
import { patchLabels } from './label-writes.js';
import { DRAIN_REQUESTED_AT_ANNOTATION, isLabelToken, type ShardLabels } from './shard-labels.js';

export interface ShardReconcilerOptions {
  transport: Pick<Transport, 'json'>;
  labels: ShardLabels;
  shardId: string;
  /** Throws unless this shard surely still holds its Lease (checked before the hand-over write). */
  assertWritable(): void;
  /** Counts the hand-overs, with the seconds since the drain was requested when known. */
  handedOver?(waitedSeconds?: number): void;
}

/**
 * A sharded controller's reconciler. An object with a drain request is handed over, not
 * reconciled: the relabel to the target shard is a run of the object's key, so it cannot
 * overlap this shard's reconcile of it, and the target sees the object only once the
 * write carries its label. An object whose label names another shard (a late requeue
 * after a move) is left alone.
 */
export function shardReconciler<T extends KubeObject>(
  resource: ResourceDescriptor<T>,
  reconcile: Reconciler<T>,
  options: ShardReconcilerOptions,
): Reconciler<T> {
  const { labels, shardId } = options;
  return async (request) => {
    const object = request.object;
    const own = object?.metadata?.labels ?? {};
    const target = own[labels.drain];
    if (object && target !== undefined) {
      options.assertWritable();
      const to = isLabelToken(target) ? target : null; // no valid target: unassigned, the leader assigns it
      const moved = await patchLabels(
        options.transport,
        resource,
        object,
        { [labels.shard]: to, [labels.drain]: null },
        { [DRAIN_REQUESTED_AT_ANNOTATION]: null },
      );
      if (moved) options.handedOver?.(secondsSince(object.metadata?.annotations?.[DRAIN_REQUESTED_AT_ANNOTATION]));
      request.log.info(
        moved
          ? `handed over to shard ${to ?? '(unassigned)'}`
          : 'hand-over skipped: the object changed; its next event decides again',
        { shard: shardId },
      );
      return;
    }
    if (object && own[labels.shard] !== shardId) return;
    return reconcile(request);
  };
}

/** Seconds since an RFC 3339 time written by the leader (its clock: skew shows here), or undefined. */
function secondsSince(at: string | undefined): number | undefined {
  const then = at ? Date.parse(at) : NaN;
  return Number.isNaN(then) ? undefined : Math.max(0, (Date.now() - then) / 1000);
}
