// The TeamSpace controller: a cluster-aware reconciler. It reconciles TeamSpaces in the
// operator's own (management) cluster and writes in the member clusters each selects,
// through the injected Fleet: the namespace, its ResourceQuota and its RoleBinding in each,
// removed from a cluster taken out of spec.clusters and from every cluster when the TeamSpace
// is deleted (its finalizer). Watches in the members map what changes there (drift: a
// namespace deleted, a quota edited) back to the TeamSpace; the fleet's engagements (a member
// named, engaged, failed, held, disengaged) reconcile the TeamSpaces that select it.
import { isDeepStrictEqual } from 'node:util';
import {
  Controller,
  Finalizer,
  Fleet,
  type KubeClient,
  Namespace,
  type ObjectRef,
  Reconcile,
  type ReconcileContext,
  type ReconcileResult,
  type ResourceEvent,
  RoleBinding,
  Source,
  StatusConditions,
  Watches,
} from '@nestor/operator';
import type { MemberStatus } from '@nestor/operator/fleet';
import { map, type Observable } from 'rxjs';
import { messageOf, placeNamespace, removeNamespace } from './member-namespace.js';
import { type ClusterOutcome, notWritable } from './member-standing.js';
import { type Placement, Placements } from './placements.js';
import { Selections } from './selections.js';
import {
  type NamespaceObject,
  ResourceQuota,
  type ResourceQuotaObject,
  TEAMSPACE_LABEL,
  teamSpaceOf,
} from './teamspace.objects.js';
import { TeamSpace, type TeamSpaceStatus } from './teamspace.resource.js';

/** Quota updates that change only its status (usage, as pods come and go) are not drift. */
export const quotaSpecOrLabelsChanged = ({ type, old, object }: ResourceEvent<ResourceQuotaObject>) =>
  type !== 'updated' || !old || !isDeepStrictEqual(old.spec, object.spec) || teamSpaceOf(old) !== teamSpaceOf(object);

@Controller(TeamSpace, { maxConcurrentReconciles: 4 })
export class TeamSpaceController {
  private readonly selections = new Selections();
  private readonly placements = new Placements();

  constructor(private readonly fleet: Fleet) {}

  @Reconcile()
  async reconcile(space: TeamSpace, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const name = space.metadata.name!;
    this.selections.set(name, space.spec.clusters);
    const members = this.members();
    const outcomes = await Promise.all(space.spec.clusters.map((cluster) => this.place(cluster, space, members)));

    // What it made in clusters it no longer selects, or under a namespace name it no longer has.
    const selected = new Set(space.spec.clusters);
    const leftovers = this.placements
      .of(name)
      .filter((p) => !p.terminating && !(selected.has(p.cluster) && p.namespace === space.spec.namespace));
    const failures = (await Promise.all(leftovers.map((p) => this.remove(p, members, space, ctx.client)))).flat();

    await this.updateStatus(ctx.client, space, outcomes);
    failures.push(...outcomes.filter((o) => o.failed).map((o) => `cluster ${o.name}: ${o.message}`));
    if (failures.length > 0) throw new Error(failures.join('; ')); // retried with backoff
    const waits = outcomes.flatMap((o) => o.retryAfterMs ?? []);
    return waits.length > 0 ? { requeueAfter: Math.min(...waits) } : undefined;
  }

  /**
   * The TeamSpace is being deleted: its namespace goes from every cluster it made one in. A
   * member of the fleet that cannot be reached now holds the deletion until it can (a throw
   * retries); one no longer in the fleet cannot be reached at all, and is named in a Warning.
   */
  @Finalizer()
  async removeEverywhere(space: TeamSpace, ctx: ReconcileContext): Promise<void> {
    const name = space.metadata.name!;
    const members = this.members();
    const targets = new Map(this.placements.of(name).map((p) => [`${p.cluster}/${p.namespace}`, p]));
    for (const cluster of space.spec.clusters) {
      const key = `${cluster}/${space.spec.namespace}`;
      // Selected, but never seen placed there (the member is not engaged yet, say): look.
      if (!targets.has(key) && members.has(cluster)) {
        targets.set(key, { cluster, namespace: space.spec.namespace, teamSpace: name, terminating: false });
      }
    }
    const pending = [...targets.values()].filter((p) => !p.terminating);
    const failures = (await Promise.all(pending.map((p) => this.remove(p, members, space, ctx.client)))).flat();
    if (failures.length > 0) throw new Error(failures.join('; '));
    this.selections.delete(name);
  }

  /**
   * A member cluster was named, engaged, failed, held, answered again or went: the TeamSpaces
   * that select it, so their status follows it without polling the fleet.
   */
  @Source()
  membersChanged(): Observable<ObjectRef[]> {
    return this.fleet.engagements$.pipe(
      map(({ cluster }) => this.selections.selecting(cluster).map((name) => ({ name }))),
    );
  }

  /** A TeamSpace's namespace in a member changed, went or appeared: noted, and its TeamSpace reconciled. */
  @Watches(Namespace, { clusters: 'members', labelSelector: TEAMSPACE_LABEL, metadataOnly: true })
  namespaceChanged(namespace: NamespaceObject, event: ResourceEvent<NamespaceObject>): ObjectRef[] {
    const cluster = event.cluster!;
    if (event.type === 'deleted') this.placements.gone(cluster, namespace.metadata!.name!);
    else this.placements.seen(cluster, namespace);
    return owners(event);
  }

  /** A TeamSpace's quota in a member was edited or deleted: applied again. */
  @Watches(ResourceQuota, {
    clusters: 'members',
    labelSelector: TEAMSPACE_LABEL,
    predicates: [quotaSpecOrLabelsChanged],
  })
  quotaChanged(_quota: ResourceQuotaObject, event: ResourceEvent<ResourceQuotaObject>): ObjectRef[] {
    return owners(event);
  }

  /** A TeamSpace's RoleBinding in a member was edited or deleted: applied again. */
  @Watches(RoleBinding, { clusters: 'members', labelSelector: TEAMSPACE_LABEL, metadataOnly: true })
  roleBindingChanged(_binding: unknown, event: ResourceEvent<{ metadata?: NamespaceObject['metadata'] }>): ObjectRef[] {
    return owners(event);
  }

  private members(): Map<string, MemberStatus> {
    return new Map(this.fleet.status().map((member) => [member.name, member]));
  }

  private async place(cluster: string, space: TeamSpace, members: Map<string, MemberStatus>): Promise<ClusterOutcome> {
    const waiting = notWritable(cluster, members.get(cluster));
    if (waiting) return waiting;
    const client = this.fleet.client(cluster);
    // Disengaged since status() was read: it is being engaged again, or went; told either way.
    if (!client) return { name: cluster, ready: false, message: 'connecting' };
    return placeNamespace(client, cluster, space, this.placements.at(cluster, space.spec.namespace));
  }

  /** Removes one placement; the failures to report (none when done, or when it never can be). */
  private async remove(
    placement: Placement,
    members: Map<string, MemberStatus>,
    space: TeamSpace,
    client: KubeClient,
  ): Promise<string[]> {
    const { cluster, namespace, teamSpace } = placement;
    const member = members.get(cluster);
    const standing = notWritable(cluster, member);
    const memberClient = standing ? undefined : this.fleet.client(cluster);
    const deleting = Boolean(space.metadata.deletionTimestamp);
    if (!memberClient) {
      if (member)
        return [`cluster ${cluster}: cannot remove namespace ${namespace} yet: ${standing?.message ?? 'connecting'}`];
      // Out of the fleet: forgotten here. Should it come back while the TeamSpace exists, its
      // watch shows the namespace again, and it is removed then.
      this.placements.gone(cluster, namespace);
      if (deleting) {
        const message = `Namespace ${namespace} is left in cluster ${cluster}: the cluster is no longer in the fleet`;
        await client.recordEvent(space, 'Warning', 'NamespaceLeft', message);
      }
      return [];
    }
    try {
      const removal = await removeNamespace(memberClient, namespace, teamSpace);
      if (removal === 'absent') this.placements.gone(cluster, namespace);
      if (removal === 'deleted') {
        const why = deleting ? 'the TeamSpace is deleted' : 'the TeamSpace no longer selects it';
        await client.recordEvent(
          space,
          'Normal',
          'NamespaceRemoved',
          `Deleted namespace ${namespace} from cluster ${cluster}: ${why}`,
        );
      }
      return [];
    } catch (error) {
      return [`cluster ${cluster}: removing namespace ${namespace}: ${messageOf(error)}`];
    }
  }

  /** Writes the status only when it changed: every write is an event that reconciles again. */
  private async updateStatus(client: KubeClient, space: TeamSpace, outcomes: ClusterOutcome[]): Promise<void> {
    const notReady = outcomes.filter((o) => !o.ready).map((o) => o.name);
    const conditions = new StatusConditions(space);
    conditions.set({
      type: 'Ready',
      status: notReady.length === 0 ? 'True' : 'False',
      reason: notReady.length === 0 ? 'AllClustersReady' : 'ClustersNotReady',
      message:
        `${outcomes.length - notReady.length}/${outcomes.length} clusters ready` +
        (notReady.length > 0 ? `; not ready: ${notReady.join(', ')}` : ''),
    });
    const status: TeamSpaceStatus = {
      conditions: conditions.list,
      observedGeneration: space.metadata.generation,
      clusters: outcomes.map(({ name, ready, message }) => ({ name, ready, message })),
    };
    if (!isDeepStrictEqual(space.status, status)) await client.patchStatus(space, status);
  }
}

/** The TeamSpaces named by the object's label, and by its label before an update. */
function owners(event: ResourceEvent<{ metadata?: NamespaceObject['metadata'] }>): ObjectRef[] {
  const now = teamSpaceOf(event.object);
  const before = event.type === 'updated' ? teamSpaceOf(event.old) : undefined;
  return [...new Set([now, before])].flatMap((name) => (name ? [{ name }] : []));
}
