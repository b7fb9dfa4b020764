import { type KubeObject, type RuntimeLogger, silentLogger, type TransportOptions } from '@nestor/core';
import type { ManagedControllerOptions } from '../controller/controller-options.js';
import { selectsMember, type ClusterSelection } from '../controller/cluster-selection.js';
import type { KubeClient } from '../../client/kube-client.js';
import type { Informer } from '../cache/informer.js';
import type { Cluster } from '../manager/cluster.js';
import type { HealthCheck } from '../manager/health.js';
import type { ClusterFleet, Manager } from '../manager/manager.js';
import { positiveDuration } from '../options-check.js';
import type { Observable } from 'rxjs';
import { Subject } from '../rx.js';
import type { ExternalSource, WatchSource } from '../controller/event-sources.js';
import type { WriteFence } from '../../client/write-fence.js';
import type { ClusterPlacement } from '../controller/cluster-placement.js';
import type { ClusterProvider, ClusterSink, EngageTarget } from './cluster-provider.js';
import type { Engagement } from './engagement.js';
import { memberWatch } from './member-watches.js';
import { ownNamespace } from '../own-namespace.js';
import { Member, type MemberPhase } from './member.js';

export interface FleetOptions {
  /** Where the member clusters come from. */
  providers: readonly ClusterProvider[];
  /** Options of each member's transport (the manager's own are not copied). */
  transport?: TransportOptions;
  /** Bound on one engagement's cache sync; past it the attempt fails and is retried (default 30 s). */
  syncTimeoutMs?: number;
  /** Backoff between failed engagements: first wait, and the cap of its doubling (default 1 s, 60 s). */
  retry?: { initialMs?: number; maxMs?: number };
  /**
   * Spread the member clusters over the replicas of a sharded operator: each is engaged by
   * the one replica its name hashes to among the live shards, while that replica holds the
   * cluster's Lease (default: true when the manager is sharded). False: every replica
   * engages every member and the leader reconciles in all of them.
   */
  spread?: boolean;
  /**
   * The operator's own namespace, where providers given no namespace look (default:
   * `ownNamespace()` when the providers start; OperatorModule gives its `namespace` as the
   * fallback outside a pod).
   */
  operatorNamespace?: string;
  logger?: RuntimeLogger;
}

/** One member cluster as the fleet reports it. */
export interface MemberStatus {
  name: string;
  /** `elsewhere`: spread over replicas, the cluster is another replica's (`shard`). */
  phase: MemberPhase | 'elsewhere';
  /** Spread over replicas: the shard the cluster belongs to. */
  shard?: string;
  /** Why the last attempt failed (until one succeeds). */
  error?: string;
  attempts: number;
  /** When the phase began (ms since the epoch). */
  since: number;
  /** Its API server does not answer: its reconciles are held. */
  held: boolean;
}

/**
 * The clusters an operator runs in besides its own (multicluster-runtime's manager): member
 * clusters engaged and disengaged by providers while the process runs, each a Cluster of its
 * own with its own connections, informers, outage gate and backoff, and its own instance of
 * every controller whose `clusters` selects it, on a lane group of the manager's one worker
 * pool (a fair share: the pool serves lanes round-robin, one key per turn). A cluster that is
 * slow, unreachable, missing a kind or refusing the credentials is retried in the background
 * and reported, and never delays the others. Controllers run only while the manager leads.
 */
export class Fleet implements ClusterFleet, ClusterSink {
  private readonly members = new Map<string, Member>();
  private readonly refused = new Map<string, { error: Error; since: number }>();
  private readonly controllers: Array<ManagedControllerOptions<KubeObject> & { clusters: ClusterSelection }> = [];
  private readonly log: RuntimeLogger;
  private readonly syncTimeoutMs: number;
  private readonly retry: { initialMs: number; maxMs: number };
  private readonly abort = new AbortController();
  private readonly stopping: Promise<boolean>[] = [];
  private leading = false;
  private running = false;
  private readonly changes = new Subject<{ member: Member; engaged: boolean }>();
  private readonly engagements = new Subject<Engagement>();
  /**
   * Each change of a member cluster on this replica: named and connecting, engaged, failed,
   * its API server held or answering again, disengaged. Hot, without replay: read
   * `status()` first, then follow. A cluster-aware reconciler maps it to its objects (a
   * `@Source()`) instead of polling `status()`. Completes when the fleet stops.
   */
  readonly engagements$: Observable<Engagement> = this.engagements.asObservable();
  /** Spread over replicas: where the members go, what each provider named, and the ones whose Lease this replica holds. */
  private readonly placement: ClusterPlacement | undefined;
  private readonly targets = new Map<string, { target: EngageTarget; since: number }>();
  private readonly placedHere = new Set<string>();

  constructor(
    private readonly manager: Manager,
    private readonly options: FleetOptions,
  ) {
    this.log = options.logger ?? silentLogger;
    this.syncTimeoutMs = positiveDuration(options.syncTimeoutMs ?? 30_000, "the fleet's sync timeout");
    this.retry = {
      initialMs: positiveDuration(options.retry?.initialMs ?? 1_000, "the fleet's first retry"),
      maxMs: positiveDuration(options.retry?.maxMs ?? 60_000, "the fleet's longest retry"),
    };
    const placement = manager.sharding?.clusters;
    if (options.spread === true && !placement) {
      throw new Error(
        'fleet.spread spreads member clusters over the shards of a sharded operator, and the manager has no sharding: set sharding as well, or leave spread unset',
      );
    }
    this.placement = options.spread === false ? undefined : placement;
    manager.attachFleet(this);
  }

  /** The engaged member clusters' names, and the manager's own. */
  get names(): string[] {
    return [
      this.manager.cluster.name,
      ...[...this.members.values()].filter((m) => m.phase === 'engaged').map((m) => m.name),
    ];
  }

  /**
   * An engaged cluster by name, the manager's own included: its client reads its cache and
   * writes to its API server (cluster-aware reconcilers); undefined when not engaged.
   */
  get(name: string): Cluster | undefined {
    if (name === this.manager.cluster.name) return this.manager.cluster;
    const member = this.members.get(name);
    return member?.phase === 'engaged' ? member.cluster : undefined;
  }

  /**
   * The client of an engaged cluster (`get(name)?.client`): reads its cache, writes to its
   * API server; undefined when not engaged. Inside a run, its writes are fenced and cut by
   * the run as the run's own client's are.
   */
  client(name: string): KubeClient | undefined {
    return this.get(name)?.client;
  }

  /** @internal The informers of each member that has a cache, for the metrics (what each kind keeps). */
  informers(): Array<{ cluster: string; informer: Informer<KubeObject> }> {
    return [...this.members.values()].flatMap((member) =>
      (member.cluster?.informers.all() ?? []).map((informer) => ({ cluster: member.name, informer })),
    );
  }

  /** Every member the providers named, engaged or not. */
  status(): MemberStatus[] {
    const members = [...this.members.values()].map((m) => ({
      name: m.name,
      phase: m.phase,
      ...(m.lastError ? { error: m.lastError.message } : {}),
      attempts: m.attempts,
      since: m.since,
      held: m.cluster?.outage.state.holding ?? false,
    }));
    const elsewhere = [...this.targets]
      .filter(([name]) => !this.members.has(name))
      .map(([name, { since }]) => {
        const shard = this.placement?.shardOf(name);
        return { name, phase: 'elsewhere' as const, ...(shard ? { shard } : {}), attempts: 0, since, held: false };
      });
    const refused = [...this.refused].map(([name, { error, since }]) => ({
      name,
      phase: 'failed' as const,
      error: error.message,
      attempts: 1,
      since,
      held: false,
    }));
    return [...members, ...elsewhere, ...refused];
  }

  /** @internal The manager hands over a controller with `clusters` set. */
  addController(options: ManagedControllerOptions<KubeObject>): void {
    const selected = { ...options, clusters: options.clusters ?? 'local' };
    this.controllers.push(selected);
    for (const member of this.members.values())
      if (selectsMember(selected.clusters, member.name)) member.addController(selected);
  }

  /** @internal A watch of member clusters feeding a controller of the manager's own cluster. */
  watch(source: WatchSource<KubeObject>): ExternalSource {
    if (this.placement) {
      throw new Error(
        `a @Watches of ${source.resource.kind} in member clusters needs every member engaged where its controller runs, ` +
          'and this fleet spreads the members over the shards of the operator (sharding): set fleet.spread to false ' +
          'to engage every member on every replica (the leader reconciles), or watch the kind in a controller that runs in the members',
      );
    }
    const members = this.members;
    return memberWatch(
      {
        engaged: () => [...members.values()].filter((m) => m.phase === 'engaged'),
        changes$: this.changes,
      },
      source,
      this.log,
    );
  }

  /** @internal The manager's caches synced: the providers start naming clusters. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.placement?.start(this.abort.signal);
    const context = { operatorNamespace: this.options.operatorNamespace ?? ownNamespace(), logger: this.log };
    for (const provider of this.options.providers) {
      Promise.resolve()
        .then(() => provider.run(this, this.manager.cluster, this.abort.signal, context))
        .catch((error: unknown) =>
          this.log.error(
            `cluster provider ${provider.name} failed: ${(error as Error).message}; its clusters stay as they are`,
          ),
        );
    }
  }

  /** @internal The manager leads: members run their controllers (spread, each by its own Lease instead). */
  lead(): void {
    this.leading = true;
    if (this.placement) return;
    for (const member of this.members.values()) member.lead();
  }

  /** @internal */
  async standBy(): Promise<void> {
    this.leading = false;
    if (this.placement) return;
    await Promise.all([...this.members.values()].map((member) => member.standBy()));
  }

  engage(name: string, target: EngageTarget): void {
    if (name === this.manager.cluster.name) {
      return this.refuse(name, new Error(`"${name}" is the manager's own cluster's name: give the member another`));
    }
    if (this.abort.signal.aborted) return;
    this.refused.delete(name);
    if (this.placement) return this.place(name, target);
    const current = this.members.get(name);
    if (current && target.revision !== undefined && current.revision === target.revision) return;
    if (current) this.disengage(name);
    this.add(name, target, () => this.leading);
  }

  /** Spread: the member runs where the placement puts it; here once this replica holds its Lease. */
  private place(name: string, target: EngageTarget): void {
    const known = this.targets.get(name);
    this.targets.set(name, { target, since: known?.since ?? Date.now() });
    if (!known) {
      this.placement!.place(name, {
        held: (fence) => this.heldHere(name, fence),
        lost: (why) => this.lostHere(name, why),
      });
      return;
    }
    if (target.revision !== undefined && known.target.revision === target.revision) return;
    // A new kubeconfig for a member engaged here: engaged again, under the same Lease.
    const member = this.members.get(name);
    if (!member) return;
    this.track(this.remove(member));
    this.add(name, target, () => this.placedHere.has(name), member.fence);
  }

  private heldHere(name: string, fence: WriteFence): void {
    const wanted = this.targets.get(name);
    if (!wanted || this.abort.signal.aborted) return;
    this.placedHere.add(name);
    const member = this.members.get(name);
    if (member)
      member.lead(); // its Lease back after a lapse: the warm member runs again
    else this.add(name, wanted.target, () => this.placedHere.has(name), fence);
  }

  private async lostHere(name: string, why: 'lease' | 'moved'): Promise<void> {
    this.placedHere.delete(name);
    const member = this.members.get(name);
    if (!member) return;
    if (why === 'lease') return member.standBy();
    this.log.info(`cluster ${name}: disengaging (placed on another replica)`);
    await this.remove(member);
  }

  /** Takes `member` out of the fleet: its metrics and status go, then it stops. */
  private remove(member: Member): Promise<boolean> {
    this.members.delete(member.name);
    this.dropped(member);
    return member.stop(this.manager.shutdownGraceMs);
  }

  private add(name: string, target: EngageTarget, leading: () => boolean, fence?: WriteFence): void {
    this.log.info(`cluster ${name}: engaging`);
    const metrics = this.manager.metrics;
    const member = new Member({
      name,
      target,
      pool: this.manager.pool,
      controllers: this.controllers.filter((c) => selectsMember(c.clusters, name)),
      ...(this.options.transport ? { transport: this.options.transport } : {}),
      kinds: this.manager.client.kinds,
      // Kept, transformed and resynced as in the manager's own cluster (the module's `cache`).
      cache: this.manager.cluster.informers.settings,
      syncTimeoutMs: this.syncTimeoutMs,
      retry: this.retry,
      leading,
      ...(fence ? { fence } : {}),
      report: (m, error) => this.report(m, target, error),
      held: (m, holding) => {
        if (this.members.get(m.name) === m)
          this.engagements.next({ cluster: m.name, type: holding ? 'held' : 'answering' });
      },
      // Controllers report as <controller>@<cluster>; the manager's outage and Event series stay its own cluster's.
      ...(metrics
        ? {
            metrics: {
              controllerSink: (controller, max) => metrics.controllerSink(controller, max),
              trackQueue: (controller, queue) => metrics.trackQueue(controller, queue),
              untrackQueue: (controller) => metrics.untrackQueue?.(controller),
            },
          }
        : {}),
      logger: this.log,
    });
    this.members.set(name, member);
    this.engagements.next({ cluster: name, type: 'connecting' });
  }

  disengage(name: string): void {
    this.refused.delete(name);
    if (this.placement && this.targets.delete(name)) {
      this.track(this.placement.unplace(name).then(() => true));
      return;
    }
    const member = this.members.get(name);
    if (!member) return;
    this.log.info(`cluster ${name}: disengaging`);
    this.track(this.remove(member));
  }

  refuse(name: string, error: Error, source?: EngageTarget['source']): void {
    if (this.members.has(name)) this.disengage(name);
    this.refused.set(name, { error, since: Date.now() });
    this.log.warn(`cluster ${name} not engaged: ${error.message}`);
    this.engagements.next({ cluster: name, type: 'failed', error: error.message });
    if (source) this.recordOn(source, 'ClusterRefused', error.message);
  }

  /** @internal Stops the providers and disengages every member. */
  async stop(graceMs: number): Promise<boolean> {
    this.abort.abort();
    const members = [...this.members.values()];
    this.members.clear();
    for (const member of members) this.dropped(member);
    this.changes.complete();
    this.engagements.complete();
    const results = await Promise.all([...members.map((m) => m.stop(graceMs)), ...this.stopping]);
    // The Leases last: every member that ran here has stopped writing.
    await this.placement?.stop();
    return results.every(Boolean);
  }

  /** @internal One advisory check per member: readiness names the ones down, and does not wait for them. */
  health(): HealthCheck[] {
    const checks = [...this.members.values()].map((member) => member.health());
    for (const [name, { error }] of this.refused) {
      checks.push({ name: `cluster:${name}`, ok: false, advisory: true, detail: `refused: ${error.message}` });
    }
    return checks;
  }

  private report(member: Member, target: EngageTarget, error?: Error): void {
    if (this.members.get(member.name) !== member) return;
    if (!error) {
      this.log.info(`cluster ${member.name}: engaged`);
      this.changes.next({ member, engaged: true });
      this.engagements.next({ cluster: member.name, type: 'engaged' });
      if (target.source) this.recordOn(target.source, 'ClusterEngaged', `engaged cluster ${member.name}`, 'Normal');
      return;
    }
    // Once per failing streak with a new reason: a cluster down for hours is not a log line a minute.
    if (member.attempts === 1 || member.lastError?.message !== error.message) {
      // (lastError is still the previous attempt's here)
      this.log.warn(`cluster ${member.name}: not engaged (attempt ${member.attempts}): ${error.message}; trying again`);
    }
    if (member.attempts === 1 && target.source) this.recordOn(target.source, 'ClusterUnreachable', error.message);
    this.engagements.next({ cluster: member.name, type: 'failed', error: error.message });
  }

  /** A member no longer engaged here: its watches of members let go of it, and users are told. */
  private dropped(member: Member): void {
    this.changes.next({ member, engaged: false });
    this.engagements.next({ cluster: member.name, type: 'disengaged' });
  }

  private recordOn(
    source: NonNullable<EngageTarget['source']>,
    reason: string,
    message: string,
    type: 'Normal' | 'Warning' = 'Warning',
  ): void {
    const { apiVersion, kind, namespace, name, uid } = source;
    const object = {
      apiVersion,
      kind,
      metadata: { name, ...(namespace ? { namespace } : {}), ...(uid ? { uid } : {}) },
    };
    this.manager.events.record(object, type, reason, message.slice(0, 1024));
  }

  private track(stopped: Promise<boolean>): void {
    this.stopping.push(stopped);
    void stopped.finally(() => this.stopping.splice(this.stopping.indexOf(stopped), 1));
  }
}
