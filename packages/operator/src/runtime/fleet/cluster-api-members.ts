// Which Cluster API Clusters are members, and on which kubeconfig: each Cluster is looked at
// again whenever it or its kubeconfig Secret changes, one look at a time per Cluster, and
// engaged, engaged again, refused or disengaged by what it and its Secret say then.
import { type KubeObject, KubeApiError, type RuntimeLogger, type Transport } from '@nestor/core';
import type { V1Secret } from '../../client/kinds.js';
import { Backoff } from '../backoff.js';
import type { Informer } from '../cache/informer.js';
import { type ClusterApiCluster, CLUSTER_KUBECONFIG_KEY, CLUSTER_KUBECONFIG_SUFFIX } from './cluster-api-cluster.js';
import type { ClusterSink, EngageTarget } from './cluster-provider.js';
import { inlineKubeconfig } from './inline-kubeconfig.js';

export interface ClusterApiMembersOptions {
  fleet: ClusterSink;
  /** The management cluster's: the kubeconfig Secret is read from the API server, never a cache. */
  transport: Pick<Transport, 'json'>;
  clusters: Informer<ClusterApiCluster>;
  /** The kubeconfig Secrets' metadata: their changes, without their keys in memory. */
  secrets: Informer<KubeObject>;
  /** The Clusters' apiVersion, for Events on them. */
  apiVersion: string;
  isReady(cluster: ClusterApiCluster): boolean;
  memberName(cluster: { namespace: string; name: string }): string;
  allowExec: boolean;
  log: RuntimeLogger;
  signal: AbortSignal;
}

/** A Cluster the provider named to the fleet. */
interface Named {
  member: string;
  /** The kubeconfig Secret's resourceVersion it was last engaged or refused on. */
  secretVersion?: string;
  /** The refusal told last: told once, not at every change of the Cluster's status. */
  refused?: string;
}

export class ClusterApiMembers {
  private readonly named = new Map<string, Named>();
  /** Member name to the Cluster (key) that holds it. */
  private readonly holders = new Map<string, string>();
  private readonly busy = new Set<string>();
  private readonly again = new Set<string>();
  private readonly retries = new Map<string, { backoff: Backoff; timer?: NodeJS.Timeout }>();
  /** Clusters whose member name another Cluster holds, with that name: looked at again when it is free. */
  private readonly taken = new Map<string, string>();

  constructor(private readonly options: ClusterApiMembersOptions) {}

  /** The Cluster `namespace/name` or its kubeconfig Secret changed: looked at again (once more if a look is under way). */
  changed(key: string): void {
    if (this.options.signal.aborted) return;
    if (this.busy.has(key)) {
      this.again.add(key);
      return;
    }
    this.busy.add(key);
    void this.settle(key);
  }

  /** The kubeconfig Secret `name` changed: its Cluster is looked at again. */
  secretChanged(namespace: string, name: string): void {
    if (name.endsWith(CLUSTER_KUBECONFIG_SUFFIX) && name.length > CLUSTER_KUBECONFIG_SUFFIX.length) {
      this.changed(`${namespace}/${name.slice(0, -CLUSTER_KUBECONFIG_SUFFIX.length)}`);
    }
  }

  stop(): void {
    for (const { timer } of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
  }

  private async settle(key: string): Promise<void> {
    for (;;) {
      this.again.delete(key);
      try {
        await this.look(key);
        this.retries.delete(key);
      } catch (error) {
        this.retryLater(key, error as Error);
      }
      // No await between the check and the release: a change meanwhile is not lost.
      if (!this.again.has(key) || this.options.signal.aborted) {
        this.busy.delete(key);
        return;
      }
    }
  }

  private async look(key: string): Promise<void> {
    const { clusters, secrets, fleet } = this.options;
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const cluster = clusters.get(key);
    if (!cluster || cluster.metadata?.deletionTimestamp || !this.options.isReady(cluster)) return this.drop(key);

    const member = this.named.get(key)?.member ?? this.options.memberName({ namespace, name });
    if (typeof member !== 'string' || member === '') {
      throw new Error(`memberName gave ${JSON.stringify(member)} for it: a member needs a name`);
    }
    const holder = this.holders.get(member);
    if (holder !== undefined && holder !== key) {
      if (!this.taken.has(key)) {
        this.taken.set(key, member);
        this.options.log.warn(`Cluster ${key} is not engaged: its member name "${member}" is Cluster ${holder}'s`);
      }
      return;
    }
    this.taken.delete(key);
    const named = this.named.get(key) ?? { member };
    this.named.set(key, named);
    this.holders.set(member, key);

    const source: NonNullable<EngageTarget['source']> = {
      apiVersion: this.options.apiVersion,
      kind: 'Cluster',
      namespace,
      name,
      ...(cluster.metadata?.uid ? { uid: cluster.metadata.uid } : {}),
    };
    const secretName = `${name}${CLUSTER_KUBECONFIG_SUFFIX}`;
    const where = `Secret ${namespace}/${secretName}`;
    const missing = () =>
      this.refuse(named, new Error(`Cluster ${key} is ready, and its kubeconfig ${where} does not exist`), source);
    const listed = secrets.get(`${namespace}/${secretName}`);
    if (!listed) return missing();
    const version = listed.metadata?.resourceVersion;
    if (version !== undefined && named.secretVersion === version) return; // engaged (or refused) on it already

    const secret = await this.readSecret(namespace, secretName).catch((error: unknown) => {
      // Not allowed to read it: a reason to report on the Cluster, besides trying again.
      const cause = (error as Error).cause;
      if (cause instanceof KubeApiError && cause.status === 403) {
        this.refuse(named, new Error(`${where} cannot be read: ${cause.message}`), source);
      }
      throw error;
    });
    if (this.options.signal.aborted) return;
    if (!secret) return missing(); // deleted meanwhile: its event follows
    named.secretVersion = secret.metadata?.resourceVersion ?? version;
    const read = inlineKubeconfig(secret, CLUSTER_KUBECONFIG_KEY, where, this.options.allowExec);
    if (read instanceof Error) return this.refuse(named, read, source);
    named.refused = undefined;
    fleet.engage(member, { kubeConfig: read.kubeConfig, revision: read.revision, source });
  }

  /** The Secret as the API server has it now (not a cache, which may lag its metadata's watch); undefined when absent. */
  private async readSecret(namespace: string, name: string): Promise<V1Secret | undefined> {
    try {
      return await this.options.transport.json<V1Secret>('GET', `/api/v1/namespaces/${namespace}/secrets/${name}`, {
        signal: this.options.signal,
      });
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) return undefined;
      throw new Error(`reading Secret ${namespace}/${name}: ${(error as Error).message}`, { cause: error });
    }
  }

  private refuse(named: Named, error: Error, source: NonNullable<EngageTarget['source']>): void {
    if (named.refused === error.message) return;
    named.refused = error.message;
    this.options.fleet.refuse(named.member, error, source);
  }

  /** No longer a member (gone, being deleted, not ready, no longer selected): disengaged. */
  private drop(key: string): void {
    this.taken.delete(key);
    const named = this.named.get(key);
    if (!named) return;
    this.named.delete(key);
    if (this.holders.get(named.member) === key) this.holders.delete(named.member);
    this.options.fleet.disengage(named.member);
    for (const [waiting, member] of this.taken) if (member === named.member) this.changed(waiting);
  }

  /**
   * A look failed (reading the Secret: the management API server, a 403; a memberName or
   * isReady that throws): left as it was, looked at again after a backoff.
   */
  private retryLater(key: string, error: Error): void {
    if (this.options.signal.aborted) return;
    const retry = this.retries.get(key) ?? { backoff: new Backoff({ initialMs: 1_000, maxMs: 60_000 }) };
    this.retries.set(key, retry);
    const waitMs = retry.backoff.next();
    this.options.log.warn(
      `Cluster ${key} not looked at: ${error.message}; looking again in ${Math.round(waitMs / 1000)} s`,
    );
    clearTimeout(retry.timer);
    retry.timer = setTimeout(() => this.changed(key), waitMs);
  }
}
