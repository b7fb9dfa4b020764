// Which TeamSpaces select each member cluster, as their last reconcile read them: a member
// the fleet tells of (engaged, failed, gone) maps to those TeamSpaces at the cost of one map
// lookup, not a scan of every TeamSpace.
export class Selections {
  private readonly clustersOf = new Map<string, readonly string[]>();
  private readonly teamSpacesIn = new Map<string, Set<string>>();

  /** The TeamSpace selects these clusters now. */
  set(teamSpace: string, clusters: readonly string[]): void {
    const before = this.clustersOf.get(teamSpace);
    if (before && before.length === clusters.length && before.every((c, i) => c === clusters[i])) return;
    this.delete(teamSpace);
    this.clustersOf.set(teamSpace, [...clusters]);
    for (const cluster of clusters) {
      let spaces = this.teamSpacesIn.get(cluster);
      if (!spaces) this.teamSpacesIn.set(cluster, (spaces = new Set()));
      spaces.add(teamSpace);
    }
  }

  /** The TeamSpace is gone. */
  delete(teamSpace: string): void {
    for (const cluster of this.clustersOf.get(teamSpace) ?? []) {
      const spaces = this.teamSpacesIn.get(cluster);
      spaces?.delete(teamSpace);
      if (spaces?.size === 0) this.teamSpacesIn.delete(cluster);
    }
    this.clustersOf.delete(teamSpace);
  }

  /** The TeamSpaces that select the cluster. */
  selecting(cluster: string): string[] {
    return [...(this.teamSpacesIn.get(cluster) ?? [])];
  }
}
