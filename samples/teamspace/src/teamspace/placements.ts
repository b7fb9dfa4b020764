// Where the namespaces this operator made are: kept from the member watches' events (each
// member's informer of labelled namespaces replays them when the member is engaged, after a
// restart too), so the reconciler knows what to remove from a cluster a TeamSpace no longer
// selects without listing every member, and what it may apply to without a read first. Each
// event costs one map operation; a TeamSpace's placements are read without a scan.
import type { NamespaceObject } from './teamspace.objects.js';
import { teamSpaceOf } from './teamspace.objects.js';

/** A namespace a TeamSpace made in a member cluster. */
export interface Placement {
  readonly cluster: string;
  readonly namespace: string;
  readonly teamSpace: string;
  /** Being deleted: a delete was sent, the namespace controller is emptying it. */
  readonly terminating: boolean;
}

export class Placements {
  /** `<cluster>/<namespace>` -> the placement: at most one TeamSpace per namespace of a cluster. */
  private readonly byKey = new Map<string, Placement>();
  /** TeamSpace -> its placements, by the same key. */
  private readonly byTeamSpace = new Map<string, Map<string, Placement>>();

  /** A labelled namespace seen in a member (added or updated); one that lost the label is gone. */
  seen(cluster: string, namespace: NamespaceObject): void {
    const name = namespace.metadata?.name;
    const teamSpace = teamSpaceOf(namespace);
    if (!name) return;
    if (!teamSpace) return this.gone(cluster, name);
    const terminating = Boolean(namespace.metadata?.deletionTimestamp);
    this.put({ cluster, namespace: name, teamSpace, terminating });
  }

  /** A namespace deleted from a member, or found gone. */
  gone(cluster: string, namespace: string): void {
    const key = keyOf(cluster, namespace);
    const placement = this.byKey.get(key);
    if (!placement) return;
    this.byKey.delete(key);
    const mine = this.byTeamSpace.get(placement.teamSpace);
    mine?.delete(key);
    if (mine?.size === 0) this.byTeamSpace.delete(placement.teamSpace);
  }

  /** The namespace of the cluster as last seen, if a TeamSpace made it. */
  at(cluster: string, namespace: string): Placement | undefined {
    return this.byKey.get(keyOf(cluster, namespace));
  }

  /** Every namespace the TeamSpace made, in any cluster, as last seen. */
  of(teamSpace: string): Placement[] {
    return [...(this.byTeamSpace.get(teamSpace)?.values() ?? [])];
  }

  private put(placement: Placement): void {
    const key = keyOf(placement.cluster, placement.namespace);
    const before = this.byKey.get(key);
    if (before && before.teamSpace !== placement.teamSpace) this.gone(placement.cluster, placement.namespace);
    this.byKey.set(key, placement);
    let mine = this.byTeamSpace.get(placement.teamSpace);
    if (!mine) this.byTeamSpace.set(placement.teamSpace, (mine = new Map()));
    mine.set(key, placement);
  }
}

// A namespace's name (a DNS label) holds no '/': the key is the cluster's whatever its name.
const keyOf = (cluster: string, namespace: string) => `${cluster}/${namespace}`;
