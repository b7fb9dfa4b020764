// The CacheCluster controller. Each reconcile gets the current CacheCluster from the cache
// (never the event that caused it), server-side applies the ConfigMap, the headless Service
// and the StatefulSet it wants, registers the cluster in the cache directory, and reports
// in status. The framework runs it when the CacheCluster, an object it owns or the backups
// ConfigMap changes, adds and removes the finalizer, and retries with backoff on a throw.
import { isDeepStrictEqual } from 'node:util';
import {
  ConfigMap,
  Controller,
  Finalizer,
  type KubeClient,
  Reconcile,
  Service,
  StatefulSet,
  StatusConditions,
  TerminalError,
  Watches,
  ownNamespace,
  type ObjectRef,
  type ReconcileContext,
  type ResourceEvent,
  type V1ConfigMap,
  type V1StatefulSet,
} from '@nestor/operator';
import { BACKUPS_CONFIGMAP, backupKey, clusterOfBackupKey, isSnapshotRule } from './backups.js';
import { CacheDirectory } from './cache-directory.js';
import {
  CONFIG_HASH_ANNOTATION,
  configHash,
  configMapFor,
  endpointOf,
  serviceFor,
  statefulSetFor,
} from './cache-cluster.objects.js';
import { CacheCluster, type CacheClusterStatus } from './cache-cluster.resource.js';

@Controller(CacheCluster, { owns: [StatefulSet, Service, ConfigMap] })
export class CacheClusterController {
  /** The backups ConfigMap's rules as the watch last delivered them: see backupsChanged. */
  private backupRules = new Map<string, string>();

  constructor(private readonly directory: CacheDirectory) {}

  @Reconcile()
  async reconcile(cluster: CacheCluster, ctx: ReconcileContext): Promise<void> {
    // The run's client: its writes fenced by this controller's Lease, cut by ctx.signal.
    const kube = ctx.client;
    const { name, namespace, uid, generation } = cluster.metadata;
    const conditions = new StatusConditions(cluster);
    const wasPaused = conditions.isTrue('Paused');

    if (cluster.spec.paused) {
      conditions.set({
        type: 'Paused',
        status: 'True',
        reason: 'SpecPaused',
        message: 'spec.paused is true: the StatefulSet, Service and ConfigMap are left as they are',
      });
      if (!wasPaused) await kube.recordEvent(cluster, 'Normal', 'Paused', 'Paused: changes are not applied');
      return this.updateStatus(kube, cluster, { conditions: conditions.list, observedGeneration: generation });
    }
    conditions.set({ type: 'Paused', status: 'False', reason: 'NotPaused', message: 'changes are applied' });
    if (wasPaused) await kube.recordEvent(cluster, 'Normal', 'Resumed', 'Resumed: changes are applied again');

    // The name must be ours in the directory. The webhook checks at creation; this catches a race.
    const entry = await this.directory.lookup(name!); // a throw (the directory is down) retries with backoff
    if (entry && entry.uid !== uid) {
      const message = `the cache directory already has ${name} for namespace ${entry.namespace}: rename this CacheCluster`;
      conditions.set({ type: 'Ready', status: 'False', reason: 'NameTaken', message });
      await this.updateStatus(kube, cluster, { conditions: conditions.list, observedGeneration: generation });
      throw new TerminalError(message); // retrying cannot help: not retried until the CacheCluster changes
    }

    // The configuration, with the snapshot rule the backups ConfigMap has for this cluster.
    const rule = this.backupRules.get(backupKey(ctx.request));
    if (rule !== undefined && !isSnapshotRule(rule)) {
      const message = `the backups ConfigMap has ${JSON.stringify(rule.slice(0, 64))} for this cluster, not a snapshot rule such as "900 1": no snapshots`;
      await kube.recordEvent(cluster, 'Warning', 'InvalidBackupRule', message);
    }
    const configMap = configMapFor(cluster, rule !== undefined && isSnapshotRule(rule) ? rule : undefined);
    const hash = configHash(configMap);
    await kube.apply(configMap, { owner: cluster });
    await kube.apply(serviceFor(cluster), { owner: cluster });
    const before = await kube.get(StatefulSet, ctx.request);
    const statefulSet = await kube.apply(statefulSetFor(cluster, hash), { owner: cluster });
    await this.recordChanges(kube, cluster, before, hash);

    const endpoint = endpointOf(cluster);
    const { replicas } = cluster.spec;
    if (entry?.endpoint !== endpoint || entry.replicas !== replicas) {
      await this.directory.register({ name: name!, namespace: namespace!, uid: uid!, endpoint, replicas });
    }

    const ready = statefulSet.status?.readyReplicas ?? 0;
    const allReady = ready === replicas && rolledOut(statefulSet, replicas);
    conditions.set({
      type: 'Ready',
      status: allReady ? 'True' : 'False',
      reason: allReady ? 'AllReplicasReady' : 'WaitingForReplicas',
      message: `${ready}/${replicas} replicas ready`,
    });
    await this.updateStatus(kube, cluster, {
      conditions: conditions.list,
      observedGeneration: generation,
      readyReplicas: ready,
      configHash: hash,
      endpoint,
    });
  }

  /** What no owner reference can clean up: the cluster's entry in the directory. */
  @Finalizer()
  async deregister(cluster: CacheCluster, ctx: ReconcileContext): Promise<void> {
    const name = cluster.metadata.name!;
    const entry = await this.directory.lookup(name); // a throw keeps the CacheCluster and retries
    if (entry?.uid !== cluster.metadata.uid) return; // another cluster's entry, or none
    await this.directory.remove(name);
    await ctx.client.recordEvent(cluster, 'Normal', 'Deregistered', `Removed ${name} from the cache directory`);
    ctx.log.log(`deregistered ${name}`);
  }

  /**
   * The backups ConfigMap, in the operator's own namespace, changed: keep its rules and
   * reconcile the clusters it names now and named before (one taken out must stop its
   * snapshots). The reconcile reads the rules kept here rather than `kube.get(ConfigMap)`:
   * that read would come from the owned ConfigMaps' informer, another watch, which may not
   * have the change yet when the reconcile runs. At start-up every watch delivers what
   * exists before any reconcile runs, so the rules are here from the first one.
   */
  @Watches(ConfigMap, { namespace: ownNamespace, fieldSelector: `metadata.name=${BACKUPS_CONFIGMAP}` })
  backupsChanged(backups: V1ConfigMap, event: ResourceEvent<V1ConfigMap>): ObjectRef[] {
    const before = this.backupRules;
    this.backupRules = new Map(event.type === 'deleted' ? [] : Object.entries(backups.data ?? {}));
    const affected = new Set([...before.keys(), ...this.backupRules.keys()]);
    return [...affected].flatMap((key) => clusterOfBackupKey(key) ?? []);
  }

  /** An Event for each change to the StatefulSet, as `kubectl describe cachecluster` shows them. */
  private async recordChanges(
    kube: KubeClient,
    cluster: CacheCluster,
    before: V1StatefulSet | undefined,
    hash: string,
  ): Promise<void> {
    const { replicas } = cluster.spec;
    if (!before) {
      const message = `Created StatefulSet ${cluster.metadata.name} with ${replicas} replicas`;
      return kube.recordEvent(cluster, 'Normal', 'Created', message);
    }
    const previousHash = before.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION];
    if (previousHash !== hash) {
      const message = `Configuration changed (${previousHash} -> ${hash}): rolling the pods`;
      await kube.recordEvent(cluster, 'Normal', 'ConfigChanged', message);
    }
    if (before.spec?.replicas !== replicas) {
      const message = `Scaled from ${before.spec?.replicas} to ${replicas} replicas`;
      await kube.recordEvent(cluster, 'Normal', 'Scaled', message);
    }
  }

  /** Writes the status only when it changed: every write is an event that reconciles again. */
  private async updateStatus(
    kube: KubeClient,
    cluster: CacheCluster,
    changes: Partial<CacheClusterStatus>,
  ): Promise<void> {
    // A merge patch writes only the fields given, so only they are compared.
    const current: Partial<CacheClusterStatus> = cluster.status ?? {};
    const fields = Object.keys(changes) as Array<keyof CacheClusterStatus>;
    if (fields.some((field) => !isDeepStrictEqual(current[field], changes[field]))) {
      await kube.patchStatus(cluster, changes);
    }
  }
}

/** The StatefulSet controller has seen the current spec and updated every pod to it. */
function rolledOut(statefulSet: V1StatefulSet, replicas: number): boolean {
  const status = statefulSet.status;
  return (
    (status?.observedGeneration ?? 0) >= (statefulSet.metadata?.generation ?? 0) &&
    (status?.updatedReplicas ?? 0) === replicas &&
    status?.currentRevision === status?.updateRevision
  );
}
