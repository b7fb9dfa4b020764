// Admission for CacheCluster: what the CRD's schema cannot say. A name must be free in the
// cache directory (an API outside Kubernetes), and spec.storage may not change, compared
// as a quantity: "1Gi" to "1024Mi" is no change, which CEL's `self == oldSelf` would refuse.
import {
  AdmissionDenied,
  compareQuantities,
  ValidateCreate,
  ValidateUpdate,
  Webhook,
  type AdmissionContext,
} from '@nestor/operator';
import { CacheDirectory } from './cache-directory.js';
import { CacheCluster } from './cache-cluster.resource.js';

@Webhook(CacheCluster, { failurePolicy: 'Fail', timeoutSeconds: 5 })
export class CacheClusterWebhook {
  constructor(private readonly directory: CacheDirectory) {}

  /** Names are unique in the directory across namespaces. */
  @ValidateCreate()
  async create(cluster: CacheCluster, ctx: AdmissionContext<CacheCluster>): Promise<void> {
    const name = cluster.metadata.name;
    if (!name) return; // generateName: no name yet; the controller reports a clash as NameTaken
    const entry = await this.directory.lookup(name);
    if (entry && entry.namespace !== ctx.namespace) {
      throw new AdmissionDenied(
        `the cache directory already has a cache named ${name}, in namespace ${entry.namespace}: names are unique across namespaces, choose another`,
        { code: 409, reason: 'AlreadyExists' },
      );
    }
  }

  /** A StatefulSet's volume claim templates are fixed once created, so is spec.storage. */
  @ValidateUpdate()
  update(cluster: CacheCluster, old: CacheCluster): void {
    const [before, after] = [old.spec.storage, cluster.spec.storage];
    if (compareQuantities(after, before) !== 0) {
      throw new AdmissionDenied(
        `spec.storage cannot change (${before} -> ${after}): the volumes are made once; create another CacheCluster for another size`,
        { code: 422, reason: 'Invalid' },
      );
    }
  }
}
