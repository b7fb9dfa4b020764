// A TeamSpace's namespace in one member cluster: made (with its ResourceQuota and RoleBinding,
// server-side applied) and removed, through that member's client. Never a namespace this
// operator did not make: one that exists without the TeamSpace's label is left alone and
// reported, and only a namespace labelled for the TeamSpace is deleted.
import { KubeApiError, type KubeClient, Namespace, RoleBinding } from '@nestor/operator';
import { clip, type ClusterOutcome } from './member-standing.js';
import type { Placement } from './placements.js';
import {
  namespaceFor,
  OBJECT_NAME,
  quotaFor,
  roleBindingFor,
  teamSpaceOf,
  type NamespaceObject,
  type RoleBindingObject,
} from './teamspace.objects.js';
import type { TeamSpace } from './teamspace.resource.js';

/** A namespace someone else has is looked at again after this long (nothing watches it). */
export const CONFLICT_RETRY_MS = 60_000;

/**
 * Applies the TeamSpace's namespace, ResourceQuota and RoleBinding in the cluster. `known` is
 * the namespace as the member watch last saw it: when it is this TeamSpace's, the read that
 * guards against adopting someone else's namespace is skipped.
 */
export async function placeNamespace(
  client: KubeClient,
  cluster: string,
  space: TeamSpace,
  known: Placement | undefined,
): Promise<ClusterOutcome> {
  const name = space.metadata.name!;
  const namespace = space.spec.namespace;
  try {
    let terminating = known?.teamSpace === name && known.terminating;
    if (known?.teamSpace !== name) {
      const existing = await client.get(Namespace, { name: namespace });
      const owner = teamSpaceOf(existing);
      if (existing && owner !== name) {
        const whose = owner ? `TeamSpace ${owner}'s` : 'not made by a TeamSpace';
        const message = `namespace ${namespace} already exists (${whose}): choose another spec.namespace`;
        return { name: cluster, ready: false, message, retryAfterMs: CONFLICT_RETRY_MS };
      }
      terminating = Boolean(existing?.metadata?.deletionTimestamp);
    }
    if (terminating) {
      // Its deletion (the namespace watch) reconciles the TeamSpace again.
      const message = `namespace ${namespace} is being deleted: it is made again once it is gone`;
      return { name: cluster, ready: false, message };
    }
    await client.apply(namespaceFor(space));
    await client.apply(quotaFor(space));
    await applyRoleBinding(client, roleBindingFor(space));
    const message = `namespace ${namespace} with its ResourceQuota and RoleBinding`;
    return { name: cluster, ready: true, message };
  } catch (error) {
    return { name: cluster, ready: false, message: clip(messageOf(error)), failed: true };
  }
}

/**
 * A RoleBinding's roleRef cannot change (the API server refuses it: 422): a TeamSpace that
 * grants another ClusterRole gets its RoleBinding deleted and made again.
 */
async function applyRoleBinding(client: KubeClient, binding: RoleBindingObject): Promise<void> {
  try {
    await client.apply(binding);
  } catch (error) {
    if (!(error instanceof KubeApiError && error.status === 422 && error.detail.includes('roleRef'))) throw error;
    await client.delete(RoleBinding, { namespace: binding.metadata!.namespace!, name: OBJECT_NAME });
    await client.apply(binding);
  }
}

/** What removing the namespace came to. */
export type Removal = 'deleted' | 'terminating' | 'absent';

/** Deletes the namespace, and what is in it, if it is there and labelled for the TeamSpace. */
export async function removeNamespace(client: KubeClient, namespace: string, teamSpace: string): Promise<Removal> {
  const existing: NamespaceObject | undefined = await client.get(Namespace, { name: namespace });
  if (!existing || teamSpaceOf(existing) !== teamSpace) return 'absent';
  if (existing.metadata?.deletionTimestamp) return 'terminating';
  return (await client.delete(Namespace, { name: namespace })) ? 'deleted' : 'absent';
}

/** The API server's words when it answered, else the error's. */
export function messageOf(error: unknown): string {
  if (error instanceof KubeApiError)
    return error.status ? `${error.status} ${error.reason}: ${error.detail}` : error.message;
  return error instanceof Error ? error.message : String(error);
}
