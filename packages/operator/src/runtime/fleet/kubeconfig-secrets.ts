import { Secret, type V1Secret } from '../../client/kinds.js';
import { replayThenFollow } from '../controller/event-sources.js';
import type { Cluster } from '../manager/cluster.js';
import type { ClusterProvider, ClusterSink, ProviderContext, ProviderPermission } from './cluster-provider.js';
import { inlineKubeconfig } from './inline-kubeconfig.js';

/** multicluster-runtime's kubeconfig provider's label, and the key of the kubeconfig in the Secret. */
export const KUBECONFIG_SECRET_LABEL = 'sigs.k8s.io/multicluster-runtime-kubeconfig';
export const KUBECONFIG_SECRET_KEY = 'kubeconfig';

export interface KubeconfigSecretsOptions {
  /**
   * The namespace of the management cluster the Secrets are in (default: the operator's
   * own, found when the provider runs, and the one `nestor manifests` deploys it to).
   */
  namespace?: string;
  /** Which Secrets are clusters (default `sigs.k8s.io/multicluster-runtime-kubeconfig=true`, as multicluster-runtime). */
  labelSelector?: string;
  /** The data key holding the kubeconfig (default 'kubeconfig'). */
  key?: string;
  /**
   * Let kubeconfigs run exec plugins and auth providers in the operator's process (default
   * false: only inline credentials, since anyone who may write such a Secret would run code).
   */
  allowExec?: boolean;
}

/**
 * Clusters from kubeconfig Secrets in a namespace of the management cluster, as
 * multicluster-runtime's kubeconfig provider: each labelled Secret is a cluster named after
 * it, engaged when it appears, engaged again when its kubeconfig changes, disengaged when
 * it goes. The kubeconfig must hold its credentials inline (ClusterConfig.fromInline).
 */
export class KubeconfigSecrets implements ClusterProvider {
  readonly name = 'kubeconfig-secrets';
  private readonly labelSelector: string;
  private readonly key: string;

  constructor(private readonly options: KubeconfigSecretsOptions = {}) {
    if (options.namespace === '') {
      throw new Error("KubeconfigSecrets' namespace is empty: name one, or leave it out for the operator's own");
    }
    this.labelSelector = options.labelSelector ?? `${KUBECONFIG_SECRET_LABEL}=true`;
    this.key = options.key ?? KUBECONFIG_SECRET_KEY;
  }

  run(fleet: ClusterSink, management: Cluster, signal: AbortSignal, context?: ProviderContext): void {
    const namespace = this.namespaceIn(context);
    const handle = management.informers.acquire(Secret, { namespace, labelSelector: this.labelSelector });
    // The informer may be shared and synced already (a @Watches of the same Secrets): the
    // Secrets it holds are engaged first, then its events followed.
    const subscription = replayThenFollow(handle.informer).subscribe(({ type, object }) => {
      const name = object.metadata?.name;
      if (!name) return;
      if (type === 'deleted') fleet.disengage(name);
      else this.engage(fleet, namespace, name, object);
    });
    signal.addEventListener(
      'abort',
      () => {
        subscription.unsubscribe();
        handle.release();
      },
      { once: true },
    );
  }

  /** Reads the Secrets of its namespace; Events about the clusters go on them. */
  permissions(context?: Pick<ProviderContext, 'operatorNamespace'>): ProviderPermission[] {
    return [
      {
        namespace: this.namespaceIn(context),
        rules: [
          { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
        ],
      },
    ];
  }

  /** Its namespace: the one given, else the operator's, known only once the provider runs. */
  private namespaceIn(context: Pick<ProviderContext, 'operatorNamespace'> | undefined): string {
    const namespace = this.options.namespace ?? context?.operatorNamespace;
    if (!namespace) {
      throw new Error("KubeconfigSecrets without a namespace reads the operator's own, and none was given to it");
    }
    return namespace;
  }

  private engage(fleet: ClusterSink, namespace: string, name: string, secret: V1Secret): void {
    const source = {
      apiVersion: 'v1',
      kind: 'Secret',
      namespace,
      name,
      ...(secret.metadata?.uid ? { uid: secret.metadata.uid } : {}),
    };
    const read = inlineKubeconfig(secret, this.key, `Secret ${namespace}/${name}`, this.options.allowExec ?? false);
    if (read instanceof Error) return fleet.refuse(name, read, source);
    fleet.engage(name, { kubeConfig: read.kubeConfig, revision: read.revision, source });
  }
}
