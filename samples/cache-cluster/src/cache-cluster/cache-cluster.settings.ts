// The operator's own settings, injected where they are needed.

export interface CacheClusterSettings {
  /** Where the backups ConfigMap lives: the namespace the operator runs in. */
  operatorNamespace: string;
}

export const CACHE_CLUSTER_SETTINGS = Symbol('CACHE_CLUSTER_SETTINGS');

/**
 * The settings from the environment. POD_NAMESPACE is the namespace of the operator's pod
 * (the Deployment `nestor manifests` writes sets it from the Downward API); outside a
 * cluster, "default".
 */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): CacheClusterSettings {
  return { operatorNamespace: env.POD_NAMESPACE || 'default' };
}
