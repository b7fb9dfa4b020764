import { ClusterConfig, loadKubeConfig, type KubeConfigSource } from '@nestor/core';
import type { ClusterProvider, ClusterSink } from './cluster-provider.js';

export interface StaticClustersOptions {
  /** The kubeconfig (or its path) whose contexts are the clusters (default: where kubectl looks). */
  kubeConfig?: KubeConfigSource | string;
  /** The contexts to engage, each as a cluster of the context's name; or cluster names to contexts. */
  contexts: readonly string[] | Readonly<Record<string, string>>;
}

/**
 * A fixed list of clusters: contexts of one kubeconfig, engaged at start and disengaged at
 * stop. Each context must exist in the kubeconfig: a name that is not is refused at once,
 * naming the contexts there are.
 */
export class StaticClusters implements ClusterProvider {
  readonly name = 'static';
  private readonly kubeConfig: ClusterConfig;
  private readonly contexts: ReadonlyMap<string, string>;

  constructor(options: StaticClustersOptions) {
    const config = loadKubeConfig(options.kubeConfig);
    if (!(config instanceof ClusterConfig)) {
      throw new Error(
        'StaticClusters needs a kubeconfig Nestor loads (a path or a ClusterConfig) to pick contexts from',
      );
    }
    this.kubeConfig = config;
    const entries = Array.isArray(options.contexts)
      ? (options.contexts as readonly string[]).map((context) => [context, context] as const)
      : Object.entries(options.contexts);
    const known = new Set(config.contexts.map((c) => c.name));
    const missing = entries.filter(([, context]) => !known.has(context)).map(([, context]) => context);
    if (missing.length > 0) {
      throw new Error(
        `StaticClusters: the kubeconfig has no context ${missing.map((c) => JSON.stringify(c)).join(', ')} ` +
          `(it has: ${[...known].join(', ') || 'none'})`,
      );
    }
    this.contexts = new Map(entries);
  }

  run(fleet: ClusterSink): void {
    for (const [name, context] of this.contexts) fleet.engage(name, { kubeConfig: this.kubeConfig, context });
  }
}
