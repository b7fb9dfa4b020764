import { createHash } from 'node:crypto';
import { ClusterConfig } from '@nestor/core';
import { Secret, type V1Secret } from '../../client/kinds.js';
import { replayThenFollow } from '../controller/event-sources.js';
import type { Cluster } from '../manager/cluster.js';
import type { ClusterProvider, ClusterSink, ProviderPermission } from './cluster-provider.js';

/** multicluster-runtime's kubeconfig provider's label, and the key of the kubeconfig in the Secret. */
export const KUBECONFIG_SECRET_LABEL = 'sigs.k8s.io/multicluster-runtime-kubeconfig';
export const KUBECONFIG_SECRET_KEY = 'kubeconfig';

/** A kubeconfig in a Secret is at most this large (a Secret is at most 1 MiB; a kubeconfig a few KiB). */
const MAX_KUBECONFIG_BYTES = 256 * 1024;

export interface KubeconfigSecretsOptions {
  /** The namespace of the management cluster the Secrets are in. */
  namespace: string;
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

  constructor(private readonly options: KubeconfigSecretsOptions) {
    if (!options.namespace) throw new Error('KubeconfigSecrets needs the namespace its Secrets are in');
    this.labelSelector = options.labelSelector ?? `${KUBECONFIG_SECRET_LABEL}=true`;
    this.key = options.key ?? KUBECONFIG_SECRET_KEY;
  }

  run(fleet: ClusterSink, management: Cluster, signal: AbortSignal): void {
    const handle = management.informers.acquire(Secret, {
      namespace: this.options.namespace,
      labelSelector: this.labelSelector,
    });
    // The informer may be shared and synced already (a @Watches of the same Secrets): the
    // Secrets it holds are engaged first, then its events followed.
    const subscription = replayThenFollow(handle.informer).subscribe(({ type, object }) => {
      const name = object.metadata?.name;
      if (!name) return;
      if (type === 'deleted') fleet.disengage(name);
      else this.engage(fleet, name, object);
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
  permissions(): ProviderPermission[] {
    return [
      {
        namespace: this.options.namespace,
        rules: [
          { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
        ],
      },
    ];
  }

  private engage(fleet: ClusterSink, name: string, secret: V1Secret): void {
    const source = {
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: this.options.namespace,
      name,
      ...(secret.metadata?.uid ? { uid: secret.metadata.uid } : {}),
    };
    const encoded = secret.data?.[this.key];
    const where = `Secret ${this.options.namespace}/${name}`;
    if (encoded === undefined) {
      return fleet.refuse(name, new Error(`${where} has no data key ${JSON.stringify(this.key)}`), source);
    }
    // base64 is 4/3 of the bytes: refused before it is decoded.
    if (encoded.length > (MAX_KUBECONFIG_BYTES * 4) / 3 + 4) {
      return fleet.refuse(name, new Error(`${where}: the kubeconfig is over ${MAX_KUBECONFIG_BYTES} bytes`), source);
    }
    const text = Buffer.from(encoded, 'base64').toString('utf8');
    let kubeConfig: ClusterConfig;
    try {
      kubeConfig = ClusterConfig.fromInline(text, { allowExec: this.options.allowExec ?? false });
    } catch (error) {
      return fleet.refuse(name, new Error(`${where}: ${(error as Error).message}`, { cause: error }), source);
    }
    const revision = createHash('sha256').update(text).digest('hex').slice(0, 16);
    fleet.engage(name, { kubeConfig, revision, source });
  }
}
