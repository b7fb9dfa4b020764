import { keyOf, type RuntimeLogger, silentLogger, sleep, whyNotServed } from '@nestor/core';
import { Secret } from '../../client/kinds.js';
import { Backoff } from '../backoff.js';
import { replayThenFollow } from '../controller/event-sources.js';
import type { Cluster } from '../manager/cluster.js';
import {
  CLUSTER_API_GROUP,
  CLUSTER_NAME_LABEL,
  type ClusterApiCluster,
  clusterApiClusters,
  controlPlaneInitialized,
} from './cluster-api-cluster.js';
import { ClusterApiMembers } from './cluster-api-members.js';
import type { ClusterProvider, ClusterSink, ProviderContext, ProviderPermission } from './cluster-provider.js';

/** Which Cluster API Clusters are members, and how they are named and judged ready. */
export interface ClusterApiClustersOptions {
  /**
   * The namespace of the management cluster the Clusters are in (default: the operator's
   * own, found when the provider runs, and the one `nestor manifests` deploys it to).
   */
  namespace?: string;
  /** The Clusters of every namespace instead (its rights on Clusters and Secrets are then cluster-wide). */
  allNamespaces?: boolean;
  /** Which Clusters are members (a label selector; default: every one of the namespace). */
  labelSelector?: string;
  /** The version of cluster.x-k8s.io the Clusters are read at (default 'v1beta1'). */
  version?: string;
  /**
   * Whether a Cluster is ready to be engaged (default: its control plane is initialized,
   * `controlPlaneInitialized`). A Cluster that stops being ready is disengaged.
   */
  isReady?: (cluster: ClusterApiCluster) => boolean;
  /**
   * The member's name for a Cluster (default `<namespace>/<name>`: Cluster names are unique
   * only in their namespace, and multicluster-runtime's provider names them so).
   */
  memberName?: (cluster: { namespace: string; name: string }) => string;
  /** Let kubeconfigs run exec plugins and auth providers (default false: inline credentials only). */
  allowExec?: boolean;
}

const API_VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;

/**
 * Clusters from Cluster API: each `Cluster` (cluster.x-k8s.io) of a namespace, or of all,
 * selected by label, is a member once its control plane is initialized, on the kubeconfig
 * its Secret `<cluster>-kubeconfig` holds under `value` (inline credentials only, as
 * KubeconfigSecrets). Engaged again when that Secret's kubeconfig changes; disengaged when
 * the Cluster is deleted, stops being ready or selected. A ready Cluster whose Secret is
 * missing or refused is reported (log, readiness, an Event on the Cluster).
 */
export class ClusterApiClusters implements ClusterProvider {
  /** Names the provider in logs. */
  readonly name = 'cluster-api';
  private readonly version: string;

  constructor(private readonly options: ClusterApiClustersOptions = {}) {
    this.version = options.version ?? 'v1beta1';
    if (!API_VERSION.test(this.version)) {
      throw new Error(`ClusterApiClusters: "${this.version}" is not an API version (v1beta1, v1beta2, ...)`);
    }
    if (options.allNamespaces && options.namespace !== undefined) {
      throw new Error('ClusterApiClusters: give a namespace or allNamespaces, not both');
    }
    if (options.namespace === '') {
      throw new Error(
        "ClusterApiClusters' namespace is empty: name one, leave it out for the operator's own, or set allNamespaces",
      );
    }
  }

  /** Waits for the Cluster kind to be served, then follows the Clusters and their kubeconfig Secrets until `signal` aborts. */
  async run(fleet: ClusterSink, management: Cluster, signal: AbortSignal, context?: ProviderContext): Promise<void> {
    const namespace = this.namespaceIn(context);
    const log = context?.logger ?? silentLogger;
    if (!(await this.served(management, signal, log))) return;
    const resource = clusterApiClusters(this.version);
    const scope = namespace ? { namespace } : {};
    const clusters = management.informers.acquire(resource, {
      ...scope,
      ...(this.options.labelSelector ? { labelSelector: this.options.labelSelector } : {}),
    });
    // Metadata only: the Secrets of a Cluster API namespace hold its clusters' CA keys too.
    const secrets = management.informers.acquire(Secret, {
      ...scope,
      labelSelector: CLUSTER_NAME_LABEL,
      metadataOnly: true,
    });
    const members = new ClusterApiMembers({
      fleet,
      transport: management.transport,
      clusters: clusters.informer,
      secrets: secrets.informer,
      apiVersion: `${CLUSTER_API_GROUP}/${this.version}`,
      isReady: this.options.isReady ?? controlPlaneInitialized,
      memberName: this.options.memberName ?? (({ namespace, name }) => `${namespace}/${name}`),
      allowExec: this.options.allowExec ?? false,
      log,
      signal,
    });
    const subscriptions: Array<{ unsubscribe(): void }> = [];
    signal.addEventListener(
      'abort',
      () => {
        for (const subscription of subscriptions) subscription.unsubscribe();
        members.stop();
        clusters.release();
        secrets.release();
      },
      { once: true },
    );
    // Both listed first: a ready Cluster is not refused for a Secret not listed yet.
    const synced = await Promise.all([clusters.informer.whenSynced(signal), secrets.informer.whenSynced(signal)]).then(
      () => true,
      () => false,
    );
    if (!synced || signal.aborted) return;
    subscriptions.push(
      secrets.informer.events$.subscribe(({ object }) =>
        members.secretChanged(object.metadata?.namespace ?? '', object.metadata?.name ?? ''),
      ),
      replayThenFollow(clusters.informer).subscribe(({ object }) => {
        if (object.metadata?.name)
          members.changed(keyOf({ namespace: object.metadata.namespace ?? '', name: object.metadata.name }));
      }),
    );
  }

  /** Reads the Clusters and their Secrets; Events about the members go on the Clusters. */
  permissions(context?: Pick<ProviderContext, 'operatorNamespace'>): ProviderPermission[] {
    const namespace = this.namespaceIn(context);
    return [
      {
        ...(namespace ? { namespace } : {}),
        rules: [
          { apiGroups: [CLUSTER_API_GROUP], resources: ['clusters'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
        ],
      },
    ];
  }

  /** Its namespace (undefined: all): the one given, else the operator's, known only once the provider runs. */
  private namespaceIn(context: Pick<ProviderContext, 'operatorNamespace'> | undefined): string | undefined {
    if (this.options.allNamespaces) return undefined;
    const namespace = this.options.namespace ?? context?.operatorNamespace;
    if (!namespace) {
      throw new Error("ClusterApiClusters without a namespace reads the operator's own, and none was given to it");
    }
    return namespace;
  }

  /** Waits until the management cluster serves the Clusters (Cluster API may be installed after the operator). */
  private async served(management: Cluster, signal: AbortSignal, log: RuntimeLogger): Promise<boolean> {
    const backoff = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
    let told = false;
    while (!signal.aborted) {
      const why = await whyNotServed(management.transport, clusterApiClusters(this.version)).catch(
        (error: Error) => `discovery failed: ${error.message}`,
      );
      if (why === undefined) {
        if (told) log.info(`Cluster API's Clusters (${CLUSTER_API_GROUP}/${this.version}) are served: engaging them`);
        return true;
      }
      if (!told)
        log.warn(`no Cluster API clusters yet: ${why} (is Cluster API installed?); looking again with backoff`);
      told = true;
      await sleep(backoff.next(), signal);
    }
    return false;
  }
}
