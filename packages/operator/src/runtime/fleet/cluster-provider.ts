// How clusters come and go: a provider tells the fleet to engage a cluster when one appears
// (a kubeconfig Secret created, a context listed) and to disengage it when it goes, as
// multicluster-runtime's providers call Engage and cancel the cluster's context.
import type { KubeConfigSource, ObjectRef, RuntimeLogger } from '@nestor/core';
import type { Cluster } from '../manager/cluster.js';

/** Where a provider engages and disengages clusters (the Fleet). */
export interface ClusterSink {
  /**
   * Engages the cluster `name` on this kubeconfig (its current context, or `context`), in
   * the background: engaging a cluster that does not answer never holds the others. Engaging
   * a name again with a changed kubeconfig (`revision`) replaces the engaged one.
   */
  engage(name: string, target: EngageTarget): void;
  /** Disengages it: its controllers stop, its reconciles are aborted, its cache is freed. */
  disengage(name: string): void;
  /**
   * The cluster `name` cannot be engaged as given (a kubeconfig that does not parse, or that
   * is refused): disengaged if it was engaged, and reported as failed with `error` (log,
   * readiness detail, an Event on `source`) until it is engaged again.
   */
  refuse(name: string, error: Error, source?: EngageTarget['source']): void;
}

/** Which API server a cluster is, and what reports about it go to. */
export interface EngageTarget {
  kubeConfig: KubeConfigSource;
  /** The context to use (default: the kubeconfig's current one). */
  context?: string;
  /** Changes when the kubeconfig does: engaging again with another revision reconnects (default: always). */
  revision?: string;
  /** The object the cluster came from (a Secret, a Cluster API Cluster): Events about the cluster go to it. */
  source?: ObjectRef & { apiVersion: string; kind: string; uid?: string };
}

/** Where a provider runs, told when it starts (and, its namespace only, to `permissions()`). */
export interface ProviderContext {
  /**
   * The operator's own namespace, where a provider given no namespace looks: `ownNamespace()`
   * when the provider runs (POD_NAMESPACE in a pod), the namespace `nestor manifests`
   * deploys the operator to when it asks for the provider's rights.
   */
  operatorNamespace: string;
  /** The fleet's logger, for what the provider cannot report on a cluster. */
  logger: RuntimeLogger;
}

/**
 * A source of clusters: run() engages and disengages them on `fleet` until `signal` aborts.
 * Providers run on the manager's own cluster (`management`), e.g. to watch Secrets there.
 */
export interface ClusterProvider {
  /** Names the provider in logs. */
  readonly name: string;
  run(fleet: ClusterSink, management: Cluster, signal: AbortSignal, context: ProviderContext): Promise<void> | void;
  /**
   * The rights it needs in the manager's own cluster (to read Secrets, say), in a namespace
   * or cluster-wide: `nestor manifests` grants them to the operator's ServiceAccount, and
   * tells the namespace it deploys the operator to.
   */
  permissions?(context: Pick<ProviderContext, 'operatorNamespace'>): ProviderPermission[];
}

/** Rights a provider needs: RBAC rules, in one namespace or (without) cluster-wide. */
export interface ProviderPermission {
  namespace?: string;
  rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
}
