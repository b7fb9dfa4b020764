// What `fleet.engagements$` tells: each change of a member cluster on this replica, so a
// cluster-aware reconciler waiting on a member is reconciled when it changes, not polled.

/** A change of one member cluster, as `fleet.engagements$` tells it. */
export interface Engagement {
  /** The member's name. */
  cluster: string;
  /**
   * - `connecting`: a provider named it (again, with a new kubeconfig): it is being engaged;
   * - `engaged`: its client and caches serve now (`fleet.client(cluster)`);
   * - `failed`: an attempt to engage it failed (the fleet tries again with backoff), or its
   *   provider refused it (a kubeconfig that does not parse); `error` says why;
   * - `held`: its API server stopped answering, its reconciles are held; `answering`: back;
   * - `disengaged`: it is no longer engaged here (its provider dropped it, a new kubeconfig
   *   replaces it, it moved to another replica, or the operator stops).
   */
  type: 'connecting' | 'engaged' | 'failed' | 'held' | 'answering' | 'disengaged';
  /** Why it failed (`failed` only). */
  error?: string;
}
