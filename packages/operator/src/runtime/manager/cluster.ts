// One API server as one unit, as controller-runtime's cluster.Cluster: the transport, the
// informer cache, the client, the Event recorder and the outage gate of one kubeconfig
// context, started, synced and stopped together. The manager holds one; an operator over
// many clusters holds one per cluster, engaged and disengaged while it runs.
import {
  ClusterConfig,
  DEFAULT_CLUSTER_NAME,
  loadKubeConfig,
  type KubeConfigSource,
  type KubeObject,
  type ResourceDescriptor,
  resourceName,
  type RuntimeLogger,
  silentLogger,
  Transport,
  type TransportOptions,
} from '@nestor/core';
import { EventRecorder, type EventRecorderMetrics, type EventRecorderOptions } from '../../client/event-recorder.js';
import { HttpKubeClient } from '../../client/http-kube-client.js';
import type { KindRegistry } from '../../client/kind-registry.js';
import type { KubeClient } from '../../client/kube-client.js';
import type { WriteEchoes } from '../../client/write-echoes.js';
import type { ClientReads } from '../../client/client-reads.js';
import type { WriteFence } from '../../client/write-fence.js';
import type { HealthCheck } from './health.js';
import type { Informer } from '../cache/informer.js';
import { InformerCache, type InformerCacheSettings } from '../cache/informer-cache.js';
import { OutageGate, type OutageMetrics } from './outage-gate.js';
import type { WorkerPool } from '../controller/worker-pool.js';

export { DEFAULT_CLUSTER_NAME };

export interface ClusterOptions {
  /** Names the cluster in logs, health checks and requests (default 'default'). */
  name?: string;
  transport: Transport;
  /** Informer cache to share (default: one of the cluster's own, with `cache`'s options). */
  informers?: InformerCache;
  /**
   * Options of every informer of the cluster's own cache, and per resource (by
   * `resourceName()`); what owned and watched kinds keep (`keeps`, see KeepChoice).
   */
  cache?: InformerCacheSettings;
  /**
   * The Event recorder the client's Events go to, or the options of the one the cluster
   * makes on its transport, fenced by `fence`.
   */
  events?: EventRecorder | Omit<EventRecorderOptions, 'fence'>;
  /** The client's field manager (default 'nestor'); also its Events' reporting controller. */
  fieldManager?: string;
  /** The client's kinds (default: a registry of its own). */
  kinds?: KindRegistry;
  /** What the client's and the recorder's writes ask first: the Leases of the manager that runs on it. */
  fence?: WriteFence;
  /** Labels the client adds to a child it writes (sharding: the owner's shard). */
  childLabels?: (object: KubeObject, resource: ResourceDescriptor) => Record<string, string> | undefined;
  /** What the outage gate holds while the API server does not answer: the manager's worker pool. */
  hold: Pick<WorkerPool, 'pause' | 'resume'>;
  metrics?: { eventSink?(): EventRecorderMetrics; outageSink?(): OutageMetrics; readSink?(): ClientReads };
  logger?: RuntimeLogger;
}

/** How `Cluster.connect` finds its API server: a kubeconfig and one of its contexts. */
export interface ClusterConnectOptions extends Omit<ClusterOptions, 'transport'> {
  /** A kubeconfig, its path, or undefined to look where kubectl does (KUBECONFIG, ~/.kube/config, in-cluster). */
  kubeConfig?: KubeConfigSource | string;
  /** The context to use (default: the kubeconfig's current context). Needs a kubeconfig Nestor parses (not a client-node KubeConfig). */
  context?: string;
  transport?: TransportOptions;
}

/**
 * One API server: its transport, informer cache, client, Event recorder and outage gate,
 * started, synced and stopped together (controller-runtime's cluster.Cluster). A Manager
 * holds one (`manager.cluster`); `Cluster.connect` makes one from a kubeconfig's context.
 */
export class Cluster {
  readonly name: string;
  readonly transport: Transport;
  readonly informers: InformerCache;
  /** Holds the cluster's reconciles while its API server does not answer. */
  readonly outage: OutageGate;
  /** Records Events best effort; flushed on stop. */
  readonly events: EventRecorder;
  /**
   * Reads from the cluster's informers, writes to its API server, fenced by `fence`;
   * controller-runtime's cluster.GetClient(). Each reconcile gets it scoped to its
   * controller and signal as `request.client`.
   */
  readonly client: KubeClient;
  /** @internal Where the client notes its controllers' writes, to know their watch events as echoes. */
  readonly echoes: WriteEchoes;
  private readonly log: RuntimeLogger;
  private ownsTransport = false;
  private started = false;

  constructor(options: ClusterOptions) {
    this.name = options.name ?? DEFAULT_CLUSTER_NAME;
    this.transport = options.transport;
    this.log = options.logger ?? silentLogger;
    this.informers =
      options.informers ??
      new InformerCache(
        options.transport,
        { logger: this.log, ...options.cache?.defaults },
        options.cache?.byResource ?? new Map(),
        options.cache?.keeps ?? {},
      );
    const outageMetrics = options.metrics?.outageSink?.();
    this.outage = new OutageGate({
      transport: options.transport,
      pool: options.hold,
      logger: this.log,
      ...(outageMetrics ? { metrics: outageMetrics } : {}),
    });
    const { events, fieldManager, fence } = options;
    const eventMetrics = options.metrics?.eventSink?.();
    this.events =
      events instanceof EventRecorder
        ? events
        : new EventRecorder(options.transport, {
            logger: this.log,
            ...(fieldManager ? { reportingController: fieldManager } : {}),
            ...(eventMetrics ? { metrics: eventMetrics } : {}),
            ...events,
            ...(fence ? { fence } : {}),
          });
    const reads = options.metrics?.readSink?.();
    const client = new HttpKubeClient(options.transport, {
      informers: this.informers,
      events: this.events,
      ...(reads ? { reads } : {}),
      ...(options.childLabels ? { childLabels: options.childLabels } : {}),
      ...(fence ? { fence } : {}),
      ...(fieldManager ? { fieldManager } : {}),
      ...(options.kinds ? { kinds: options.kinds } : {}),
    });
    this.client = client;
    this.echoes = client.echoes;
  }

  /**
   * A cluster on the API server of a kubeconfig's context, with a transport of its own,
   * closed by stop(). Fails, naming the contexts there are, when the context is unknown.
   */
  static async connect(options: ClusterConnectOptions): Promise<Cluster> {
    const { kubeConfig, context, transport: transportOptions, ...rest } = options;
    const source = withContext(loadKubeConfig(kubeConfig), context);
    const transport = await Transport.fromKubeConfig(source, transportOptions);
    const cluster = new Cluster({ name: rest.name ?? context ?? DEFAULT_CLUSTER_NAME, ...rest, transport });
    cluster.ownsTransport = true;
    return cluster;
  }

  /** Starts watching for outages of the API server (idempotent); informers start as controllers ask for them. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.outage.start();
  }

  /**
   * Waits until these informers have synced, bounded by `timeoutMs`; a stop (`signal`)
   * ends the wait without an error. The error names the informers still syncing and why.
   */
  async waitForSync(
    informers: readonly Informer<KubeObject>[],
    { timeoutMs, signal }: { timeoutMs: number; signal: AbortSignal },
  ): Promise<void> {
    const pending = [...new Set(informers)];
    // A timer that keeps the process alive (AbortSignal.timeout's does not): while the API
    // server is down nothing else is pending, and Node would end a process still starting.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error(`no sync within ${timeoutMs} ms`)), timeoutMs);
    try {
      await Promise.all(pending.map((informer) => informer.whenSynced(AbortSignal.any([timeout.signal, signal]))));
    } catch (error) {
      if (signal.aborted) return;
      const stuck = pending.filter((i) => !i.synced);
      const detail = stuck
        .map((i) => `${resourceName(i.resource)}${i.stats.lastError ? `: ${i.stats.lastError}` : ''}`)
        .join('; ');
      throw new Error(
        `caches${this.name === DEFAULT_CLUSTER_NAME ? '' : ` of cluster ${this.name}`} did not sync within ${timeoutMs} ms: ${detail || (error as Error).message}. ` +
          `Check that the API server is reachable, the CRDs are installed and the operator's RBAC allows list and watch.`,
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** The API server answers (the outage gate is not holding), and each informer synced with a healthy watch. */
  health(): HealthCheck[] {
    const outage = this.outage.state;
    const checks: HealthCheck[] = [
      {
        name: 'apiserver',
        ok: !outage.holding,
        ...(outage.holding
          ? {
              detail: `for ${((Date.now() - outage.since!) / 1000).toFixed(0)} s the API server ${outage.error ?? 'does not answer'}; reconciles held`,
            }
          : {}),
      },
    ];
    for (const informer of this.informers.all()) {
      const { stats } = informer;
      const ok = informer.synced && stats.failures === 0;
      checks.push({
        name: `informer:${resourceName(informer.resource)}`,
        ok,
        ...(ok
          ? {}
          : {
              detail: informer.synced
                ? `watch failing: ${stats.lastError ?? 'unknown error'}`
                : `not synced yet${stats.lastError ? `: ${stats.lastError}` : ''}`,
            }),
      });
    }
    return checks;
  }

  /** Writes the Events still pending, within `flushMs`; false when some were dropped. */
  flushEvents(flushMs: number): Promise<boolean> {
    return this.events.close(flushMs);
  }

  /** Stops the informers and the outage gate; closes the transport when the cluster made it (`connect`). */
  stop(): void {
    this.informers.stopAll();
    this.outage.stop();
    this.started = false;
    if (this.ownsTransport) this.transport.close();
  }
}

/** The kubeconfig with `context` as its current context; the source itself without one. */
function withContext(source: KubeConfigSource, context: string | undefined): KubeConfigSource {
  if (context === undefined) return source;
  if (!(source instanceof ClusterConfig)) {
    throw new Error(
      `context ${JSON.stringify(context)} was asked of a kubeconfig Nestor did not load: pass its path or a ClusterConfig instead`,
    );
  }
  if (!source.getContextObject(context)) {
    const known = source.contexts.map((c) => c.name).join(', ') || 'none';
    throw new Error(`the kubeconfig has no context ${JSON.stringify(context)} (it has: ${known})`);
  }
  return new ClusterConfig(source.clusters, source.users, source.contexts, context);
}
