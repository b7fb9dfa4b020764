// @nestor/operator/fleet: one operator over many clusters. The member clusters come from
// providers (kubeconfig Secrets, a fixed list of contexts, or one of
// your own); controllers choose them with `clusters`; the Fleet gives any engaged cluster's
// client and cache, and tells each change of a member (`engagements$`).
export { Fleet, type FleetOptions, type MemberStatus } from './fleet.js';
export type { Engagement } from './engagement.js';
export type {
  ClusterProvider,
  ClusterSink,
  EngageTarget,
  ProviderContext,
  ProviderPermission,
} from './cluster-provider.js';
export { StaticClusters, type StaticClustersOptions } from './static-clusters.js';
export {
  KubeconfigSecrets,
  KUBECONFIG_SECRET_KEY,
  KUBECONFIG_SECRET_LABEL,
  type KubeconfigSecretsOptions,
} from './kubeconfig-secrets.js';
export { ClusterApiClusters, type ClusterApiClustersOptions } from './cluster-api-clusters.js';
export { type ClusterApiCluster, type ClusterApiCondition, controlPlaneInitialized } from './cluster-api-cluster.js';
export type { MemberPhase } from './member.js';
export type { ClusterPlacement, PlacedCluster } from '../controller/cluster-placement.js';
export type { ClusterSelection } from '../controller/cluster-selection.js';
