// Cluster API's Cluster as the fleet reads it: the kind, where its kubeconfig is, and when
// its API server can be reached.
import type { KubeObject, ResourceDescriptor } from '@nestor/core';

export const CLUSTER_API_GROUP = 'cluster.x-k8s.io';
/** The label Cluster API puts on a Cluster's Secrets, its kubeconfig's among them: the Cluster's name. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** The Secret `<cluster>-kubeconfig` holds the kubeconfig under this data key. */
export const CLUSTER_KUBECONFIG_KEY = 'value';
export const CLUSTER_KUBECONFIG_SUFFIX = '-kubeconfig';

/** One of a Cluster's status conditions (v1beta1's and metav1's alike). */
export interface ClusterApiCondition {
  /** `ControlPlaneInitialized`, `Ready`, ... */
  type: string;
  /** `True`, `False` or `Unknown`. */
  status: string;
  reason?: string;
  message?: string;
}

/** The part of a Cluster API Cluster the fleet reads: its status, across API versions. */
export interface ClusterApiCluster extends KubeObject {
  /** Not read: the infrastructure and control plane references, the endpoint, topology. */
  spec?: Record<string, unknown>;
  /** What says whether its control plane is up, as each version of cluster.x-k8s.io has it. */
  status?: {
    phase?: string;
    /** v1beta1. */
    infrastructureReady?: boolean;
    /** v1beta1. */
    controlPlaneReady?: boolean;
    /** v1alpha3. */
    controlPlaneInitialized?: boolean;
    /** v1beta2. */
    initialization?: { infrastructureProvisioned?: boolean; controlPlaneInitialized?: boolean };
    conditions?: ClusterApiCondition[];
    /** v1beta1 from Cluster API 1.9: the v1beta2 conditions beside the old ones. */
    v1beta2?: { conditions?: ClusterApiCondition[] };
  };
}

/** The Cluster kind at one version of cluster.x-k8s.io. */
export function clusterApiClusters(version: string): ResourceDescriptor<ClusterApiCluster> {
  return { group: CLUSTER_API_GROUP, version, kind: 'Cluster', plural: 'clusters', namespaced: true };
}

/**
 * Whether the Cluster's control plane is initialized: its API server has come up once and
 * the kubeconfig Secret reaches it. What Cluster API's own controllers wait for before they
 * reach a workload cluster (its `ControlPlaneInitialized` condition, `controlPlaneInitialized`
 * in v1beta2's and v1alpha3's status), or `controlPlaneReady` where no condition says. The
 * phase `Provisioned` (multicluster-runtime's test) comes with the infrastructure, before
 * any API server answers. Initialized stays true for the Cluster's life: a control plane
 * being rolled out keeps its members engaged, and an API server that stops answering holds
 * only that member's reconciles (its outage gate).
 */
export function controlPlaneInitialized(cluster: ClusterApiCluster): boolean {
  const status = cluster.status;
  if (!status) return false;
  const listed = (conditions: unknown) => (Array.isArray(conditions) ? (conditions as ClusterApiCondition[]) : []);
  const condition = [...listed(status.conditions), ...listed(status.v1beta2?.conditions)].find(
    (c) => c?.type === 'ControlPlaneInitialized',
  );
  if (condition) return condition.status === 'True';
  return (
    status.initialization?.controlPlaneInitialized === true ||
    status.controlPlaneInitialized === true ||
    status.controlPlaneReady === true
  );
}
