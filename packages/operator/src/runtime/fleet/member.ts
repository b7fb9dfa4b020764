import {
  type KubeObject,
  type ResourceDescriptor,
  resourceName,
  type RuntimeLogger,
  sleep,
  type TransportOptions,
  whyNotServed,
} from '@nestor/core';
import type { KindRegistry } from '../../client/kind-registry.js';
import type { InformerCacheSettings } from '../cache/informer-cache.js';
import { Backoff } from '../backoff.js';
import { controllerKinds, type ManagedControllerOptions } from '../controller/controller-options.js';
import { ManagedController } from '../controller/managed-controller.js';
import type { LaneGroup, WorkerPool } from '../controller/worker-pool.js';
import { Cluster } from '../manager/cluster.js';
import type { HealthCheck } from '../manager/health.js';
import type { ManagerMetrics } from '../manager/manager.js';
import type { WriteFence } from '../../client/write-fence.js';
import type { EngageTarget } from './cluster-provider.js';

/** Where a member is: connecting (and syncing its caches), engaged, or failed and waiting to try again. */
export type MemberPhase = 'connecting' | 'engaged' | 'failed' | 'stopped';

export interface MemberOptions {
  name: string;
  target: EngageTarget;
  pool: WorkerPool;
  /** The controllers that run in this cluster. */
  controllers: readonly ManagedControllerOptions<KubeObject>[];
  transport?: TransportOptions;
  kinds?: KindRegistry;
  fieldManager?: string;
  /** Its cache's settings: the manager's cluster's (InformerCache.settings), so kinds are kept as there. */
  cache?: InformerCacheSettings;
  syncTimeoutMs: number;
  retry: { initialMs: number; maxMs: number };
  /** Whether this replica leads now (or holds the member's Lease, spread): controllers start only then. */
  leading(): boolean;
  /** Fences the member's writes (spread over replicas: its Lease). */
  fence?: WriteFence;
  /** Told each time an attempt fails, and when the cluster is engaged again. */
  report(member: Member, error?: Error): void;
  /** Told when its API server stops answering (its reconciles held) and when it answers again. */
  held?(member: Member, holding: boolean): void;
  metrics?: ManagerMetrics;
  logger: RuntimeLogger;
}

/**
 * One member cluster of a fleet: its own Cluster (transport, informers, client, recorder,
 * outage gate), its own instance of each controller that runs in it, and a group of lanes
 * in the shared worker pool that its outage gate holds without holding the others.
 * Engaging runs in the background and retries with backoff until it syncs or is stopped.
 */
export class Member {
  readonly name: string;
  phase: MemberPhase = 'connecting';
  /** Why the last attempt failed, and since when the phase holds. */
  lastError?: Error;
  since = Date.now();
  attempts = 0;
  cluster?: Cluster;
  private readonly group: LaneGroup;
  private readonly controllers = new Map<string, ManagedController<KubeObject>>();
  private readonly started = new Set<ManagedController<KubeObject>>();
  private readonly abort = new AbortController();
  private readonly log: RuntimeLogger;
  private readonly engaged: Promise<void>;

  constructor(private readonly options: MemberOptions) {
    this.name = options.name;
    this.group = options.pool.group();
    this.log = options.logger;
    this.engaged = this.engage();
  }

  get revision(): string | undefined {
    return this.options.target.revision;
  }

  get fence(): WriteFence | undefined {
    return this.options.fence;
  }

  /** Connects, syncs and starts, trying again with backoff until it works or stop() is called. */
  private async engage(): Promise<void> {
    const backoff = new Backoff({ initialMs: this.options.retry.initialMs, maxMs: this.options.retry.maxMs });
    const { signal } = this.abort;
    while (!signal.aborted) {
      this.attempts++;
      try {
        await this.connect(signal);
        if (signal.aborted) return;
        this.phase = 'engaged';
        this.since = Date.now();
        this.lastError = undefined;
        this.options.report(this);
        if (this.options.leading()) this.lead();
        return;
      } catch (error) {
        await this.teardown(0);
        if (signal.aborted) return;
        this.phase = 'failed';
        this.since = Date.now();
        this.options.report(this, error as Error);
        this.lastError = error as Error;
        await sleep(backoff.next(), signal).catch(() => undefined);
      }
    }
  }

  private async connect(signal: AbortSignal): Promise<void> {
    this.phase = 'connecting';
    const { target, metrics } = this.options;
    const cluster = await Cluster.connect({
      name: this.name,
      kubeConfig: target.kubeConfig,
      ...(target.context ? { context: target.context } : {}),
      ...(this.options.transport ? { transport: this.options.transport } : {}),
      hold: this.group,
      logger: naming(this.log, this.name),
      ...(this.options.cache ? { cache: this.options.cache } : {}),
      ...(this.options.kinds ? { kinds: this.options.kinds } : {}),
      ...(this.options.fieldManager ? { fieldManager: this.options.fieldManager } : {}),
      ...(this.options.fence ? { fence: this.options.fence } : {}),
      // The member's outage gate reports here; the manager's outage series stay its own cluster's.
      metrics: { ...metrics, outageSink: () => ({ holding: (held) => this.options.held?.(this, held) }) },
    });
    this.cluster = cluster;
    if (signal.aborted) return;
    // One answer first: a cluster that does not answer (or refuses the credentials) fails
    // here in seconds, with the server's words, instead of as a sync timeout.
    await cluster.transport.json('GET', '/version', { signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]) });
    // Kinds the cluster does not serve (a CRD not installed there) fail the attempt by name,
    // before any informer waits out the sync timeout on 404s.
    await checkServed(cluster, this.options.controllers);
    cluster.start();
    for (const options of this.options.controllers) this.add(options);
    await cluster.waitForSync(
      [...this.controllers.values()].flatMap((c) => c.informers),
      { timeoutMs: this.options.syncTimeoutMs, signal },
    );
  }

  /** A controller that runs in this cluster: made now when engaged (started once synced), else at engagement. */
  addController(options: ManagedControllerOptions<KubeObject>): void {
    if (this.phase !== 'engaged' || !this.cluster) return; // engage() adds every controller of the fleet
    const controller = this.add(options);
    void this.cluster
      .waitForSync(controller.informers, { timeoutMs: this.options.syncTimeoutMs, signal: this.abort.signal })
      .then(
        () => {
          if (this.options.leading() && this.phase === 'engaged') this.start(controller);
        },
        (error: Error) => this.log.error(`cluster ${this.name}: ${error.message}`),
      );
  }

  private add(options: ManagedControllerOptions<KubeObject>): ManagedController<KubeObject> {
    const cluster = this.cluster!;
    const metrics = this.options.metrics;
    const name = `${options.name}@${this.name}`;
    const controller = new ManagedController<KubeObject>({
      logger: this.log,
      outageHold: true,
      events: cluster.events,
      echoes: cluster.echoes,
      ...(metrics ? { metrics: metrics.controllerSink(name, options.maxConcurrentReconciles ?? 1) } : {}),
      ...options,
      name,
      client: cluster.client,
      cluster: this.name,
    });
    if (metrics) metrics.trackQueue(name, controller.queue as never);
    this.controllers.set(options.name, controller);
    controller.prepare(cluster.informers);
    return controller;
  }

  /** This replica leads: the controllers run. */
  lead(): void {
    if (this.phase !== 'engaged') return;
    for (const controller of this.controllers.values()) {
      if (controller.informers.every((i) => i.synced)) this.start(controller);
    }
  }

  private start(controller: ManagedController<KubeObject>): void {
    if (this.started.has(controller)) return;
    this.started.add(controller);
    controller.start(this.options.pool, this.group);
  }

  /** This replica no longer leads: running reconciles are aborted; caches stay warm. */
  async standBy(): Promise<void> {
    const running = [...this.started];
    this.started.clear();
    await Promise.all(running.map((controller) => controller.standBy()));
  }

  /** Disengages: intake stops, reconciles finish within `graceMs` or are aborted, the cache and connections are freed. */
  async stop(graceMs: number): Promise<boolean> {
    this.abort.abort();
    this.phase = 'stopped';
    await this.engaged;
    return this.teardown(graceMs);
  }

  private async teardown(graceMs: number): Promise<boolean> {
    const controllers = [...this.controllers.values()];
    this.controllers.clear();
    this.started.clear();
    const drained = await Promise.all(controllers.map((controller) => controller.stop(graceMs)));
    // The metrics read each queue when scraped: a queue left there would keep its controller,
    // informers and cache alive after the member went (found by bench/fleet.mjs's heap snapshot).
    for (const controller of controllers) this.options.metrics?.untrackQueue?.(controller.name);
    if (this.cluster) {
      await this.cluster.flushEvents(1_000);
      this.cluster.stop();
      this.cluster = undefined;
    }
    return drained.every(Boolean);
  }

  /** Objects its caches hold. */
  get cachedObjects(): number {
    return this.cluster?.informers.all().reduce((sum, informer) => sum + informer.size, 0) ?? 0;
  }

  health(): HealthCheck {
    const name = `cluster:${this.name}`;
    if (this.phase === 'engaged') {
      const outage = this.cluster?.outage.state;
      if (outage?.holding) {
        return {
          name,
          ok: false,
          advisory: true,
          detail: `its API server ${outage.error ?? 'does not answer'}; its reconciles held`,
        };
      }
      return { name, ok: true, advisory: true };
    }
    const why = this.lastError ? `: ${this.lastError.message}` : '';
    const detail =
      this.phase === 'failed'
        ? `not engaged after ${this.attempts} attempt(s)${why}; trying again`
        : `engaging (attempt ${this.attempts})${why}`;
    return { name, ok: false, advisory: true, detail };
  }
}

/** Fails naming every kind of these controllers the cluster does not serve. */
async function checkServed(
  cluster: Cluster,
  controllers: readonly ManagedControllerOptions<KubeObject>[],
): Promise<void> {
  const kinds = new Map<string, ResourceDescriptor>();
  for (const kind of controllers.flatMap(controllerKinds)) kinds.set(resourceName(kind), kind);
  const discovery = new Map<string, Promise<Set<string> | undefined>>();
  const missing = (
    await Promise.all(
      [...kinds.values()].map(async (kind) => {
        const why = await whyNotServed(cluster.transport, kind, discovery);
        return why === undefined ? undefined : `${kind.kind} (${why}: is its CRD installed?)`;
      }),
    )
  ).filter((why): why is string => why !== undefined);
  if (missing.length > 0)
    throw new Error(`the cluster does not serve what its controllers need: ${missing.join('; ')}`);
}

/** The fleet's logger with the member's name in each line's fields: its cache's lines (what each kind keeps) say which cluster. */
function naming(log: RuntimeLogger, cluster: string): RuntimeLogger {
  const add = (fields?: Record<string, unknown>) => ({ cluster, ...fields });
  return {
    debug: (message, fields) => log.debug(message, add(fields)),
    info: (message, fields) => log.info(message, add(fields)),
    warn: (message, fields) => log.warn(message, add(fields)),
    error: (message, fields) => log.error(message, add(fields)),
  };
}
