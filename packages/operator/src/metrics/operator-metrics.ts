import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EventRecorderMetrics } from '../runtime/manager.js';
import type { OutageMetrics } from '../runtime/outage-gate.js';
import type { ControllerMetricsSink, ReconcileOutcome } from '../runtime/reconcile-loop.js';
import type { QueueMetricsSink, WorkQueue } from '../runtime/queue.js';
import type { ShardingMetrics } from '../runtime/shard-scope.js';

/** controller-runtime's reconcile_time_seconds buckets, so dashboards built for it read the same. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2,
  2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue latency buckets: 10 ns to 10 s. */
const QUEUE_BUCKETS = Array.from({ length: 10 }, (_, i) => 1e-8 * 10 ** i);

/** A JavaScript bug (what a Go panic would be): counted as controller_runtime_reconcile_panics_total. */
function isProgrammingError(error: Error | undefined): boolean {
  return (
    error instanceof TypeError ||
    error instanceof ReferenceError ||
    error instanceof RangeError ||
    error instanceof SyntaxError
  );
}

/** Live numbers the metrics read when scraped. */
export interface WatchStatsSource {
  resource: string;
  stats: { restarts: number; relists: number; lastEventAt?: number; lastSyncAt?: number };
}

/**
 * Prometheus metrics under controller-runtime's and client-go's names and labels, so the
 * dashboards and alerts people run for Go operators work unchanged; plus Nestor's own
 * for watches.
 */
export class OperatorMetrics {
  readonly registry: Registry;
  private readonly queues = new Map<string, WorkQueue<string>>();
  private readonly watches = new Set<() => WatchStatsSource[]>();

  private readonly reconcileTotal: Counter<'controller' | 'result'>;
  private readonly reconcileErrors: Counter<'controller'>;
  private readonly terminalErrors: Counter<'controller'>;
  private readonly panics: Counter<'controller'>;
  private readonly timeouts: Counter<'controller'>;
  private readonly reconcileTime: Histogram<'controller'>;
  private readonly maxConcurrent: Gauge<'controller'>;
  private readonly activeWorkers: Gauge<'controller'>;
  private readonly streamFaults: Counter<'controller' | 'stream' | 'fault'>;
  private readonly depth: Gauge<'name' | 'controller'>;
  private readonly adds: Counter<'name' | 'controller'>;
  private readonly lowPriorityAdds: Counter<'name' | 'controller'>;
  private readonly queueDuration: Histogram<'name' | 'controller'>;
  private readonly workDuration: Histogram<'name' | 'controller'>;
  private readonly retries: Counter<'name' | 'controller'>;
  private readonly leader: Gauge<'name'>;
  private readonly retriesExhausted: Counter<'controller'>;
  private readonly eventsWritten: Counter<'verb'>;
  private readonly eventsDropped: Counter<'reason'>;
  private readonly apiServerUnreachable: Gauge;
  private readonly apiServerOutages: Counter;
  private readonly webhookLatency: Histogram<'webhook'>;
  private readonly webhookRequests: Counter<'webhook' | 'code'>;
  private readonly webhookInFlight: Gauge<'webhook'>;
  private readonly webhookDenials: Counter<'webhook' | 'code'>;

  constructor(options: { registry?: Registry; defaultMetrics?: boolean } = {}) {
    const registers = [(this.registry = options.registry ?? new Registry())];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    const queueLabels = ['name', 'controller'] as const;
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.terminalErrors = new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.panics = new Counter({
      name: 'controller_runtime_reconcile_panics_total',
      help: 'Total number of reconciliation panics (TypeError, ReferenceError, RangeError, SyntaxError) per controller',
      labelNames: ['controller'],
      registers,
    });
    this.timeouts = new Counter({
      name: 'controller_runtime_reconcile_timeouts_total',
      help: 'Total number of reconciliation timeouts per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.maxConcurrent = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });
    this.activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
    this.streamFaults = new Counter({
      name: 'nestor_controller_stream_faults_total',
      help: 'Events skipped because a predicate or mapper threw or a request was invalid, and sources subscribed again after they failed or completed, per controller and stream',
      labelNames: ['controller', 'stream', 'fault'],
      registers,
    });
    this.depth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: queueLabels,
      registers,
    });
    this.adds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: queueLabels,
      registers,
    });
    this.lowPriorityAdds = new Counter({
      name: 'nestor_workqueue_low_priority_adds_total',
      help: "Adds at low priority, counted in workqueue_adds_total too: watch events that echo the controller's own writes, queued behind the other changes",
      labelNames: queueLabels,
      registers,
    });
    this.queueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: queueLabels,
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: queueLabels,
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.retries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: queueLabels,
      registers,
    });
    const queues = this.queues;
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: 'How many seconds of work has been done that is in progress and has not been observed by work_duration',
      labelNames: queueLabels,
      registers,
      collect() {
        for (const [name, queue] of queues) this.set({ name, controller: name }, queue.unfinishedWorkSeconds());
      },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running',
      labelNames: queueLabels,
      registers,
      collect() {
        for (const [name, queue] of queues)
          this.set({ name, controller: name }, queue.longestRunningProcessorSeconds());
      },
    });
    this.retriesExhausted = new Counter({
      name: 'nestor_reconcile_retries_exhausted_total',
      help: 'Objects a controller gave up on after maxRetries failed reconciles in a row (retried again when they change)',
      labelNames: ['controller'],
      registers,
    });
    this.eventsWritten = new Counter({
      name: 'nestor_events_written_total',
      help: 'Event writes to the API server: create (a new Event) or patch (its count or series)',
      labelNames: ['verb'],
      registers,
    });
    this.eventsDropped = new Counter({
      name: 'nestor_events_dropped_total',
      help: 'Events not written, by reason (queue-full, rate-limited, failed, fenced, shutdown, invalid)',
      labelNames: ['reason'],
      registers,
    });
    for (const verb of ['create', 'patch']) this.eventsWritten.inc({ verb }, 0);
    for (const reason of ['queue-full', 'rate-limited', 'failed', 'fenced', 'shutdown', 'invalid'])
      this.eventsDropped.inc({ reason }, 0);
    this.apiServerUnreachable = new Gauge({
      name: 'nestor_apiserver_unreachable',
      help: '1 while the API server gives no response and reconciles are held (the outage gate), else 0',
      registers,
    });
    this.apiServerUnreachable.set(0);
    this.apiServerOutages = new Counter({
      name: 'nestor_apiserver_outages_total',
      help: 'Times the API server stopped answering and reconciles were held until it answered /readyz again',
      registers,
    });
    // controller-runtime's webhook metrics (its default buckets are prom-client's), and the denials.
    this.webhookLatency = new Histogram({
      name: 'controller_runtime_webhook_latency_seconds',
      help: 'Histogram of the latency of processing admission requests',
      labelNames: ['webhook'],
      registers,
    });
    this.webhookRequests = new Counter({
      name: 'controller_runtime_webhook_requests_total',
      help: 'Total number of admission requests by HTTP status code',
      labelNames: ['webhook', 'code'],
      registers,
    });
    this.webhookInFlight = new Gauge({
      name: 'controller_runtime_webhook_requests_in_flight',
      help: 'Current number of admission requests being served',
      labelNames: ['webhook'],
      registers,
    });
    this.webhookDenials = new Counter({
      name: 'nestor_webhook_denials_total',
      help: 'Reviews refused: admission answered allowed=false (code: the denial status code, 500 when the handler threw) and conversions answered Failure (code 500)',
      labelNames: ['webhook', 'code'],
      registers,
    });
    this.leader = new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master',
      labelNames: ['name'],
      registers,
    });
    const watches = this.watches;
    const watchGauge = (name: string, help: string, read: (s: WatchStatsSource) => number | undefined) =>
      new Gauge({
        name,
        help,
        labelNames: ['resource'],
        registers,
        collect() {
          this.reset();
          for (const source of [...watches].flatMap((list) => list())) {
            const value = read(source);
            if (value !== undefined) this.set({ resource: source.resource }, value);
          }
        },
      });
    watchGauge('nestor_watch_restarts', 'Times the watch of a resource reconnected', (s) => s.stats.restarts);
    watchGauge(
      'nestor_watch_relists',
      'Times the watch of a resource listed anew (first list, 410 Gone)',
      (s) => s.stats.relists,
    );
    watchGauge(
      'nestor_watch_last_event_age_seconds',
      'Seconds since the watch of a resource last received anything (its list, an event or a bookmark)',
      (s) => {
        // From the list on: a watch that never got an event since must show its age, not vanish.
        const last = Math.max(s.stats.lastEventAt ?? -Infinity, s.stats.lastSyncAt ?? -Infinity);
        return last === -Infinity ? undefined : (Date.now() - last) / 1000;
      },
    );
  }

  /** The sink a controller reports to; its queue's gauges are read from `queue` when scraped. */
  controllerSink(controller: string, maxConcurrentReconciles: number): ControllerMetricsSink {
    this.maxConcurrent.set({ controller }, maxConcurrentReconciles);
    this.activeWorkers.set({ controller }, 0);
    const labels = { name: controller, controller };
    // Every series exists from the start, at 0, as in controller-runtime and client-go: rate()
    // and alerts on a counter that has not counted yet see 0, not an absent series.
    for (const result of ['success', 'error', 'requeue', 'requeue_after'])
      this.reconcileTotal.inc({ controller, result }, 0);
    for (const counter of [
      this.reconcileErrors,
      this.terminalErrors,
      this.panics,
      this.timeouts,
      this.retriesExhausted,
    ])
      counter.inc({ controller }, 0);
    this.reconcileTime.zero({ controller });
    this.depth.set(labels, 0);
    this.adds.inc(labels, 0);
    this.lowPriorityAdds.inc(labels, 0);
    this.retries.inc(labels, 0);
    this.queueDuration.zero(labels);
    this.workDuration.zero(labels);
    const queue: QueueMetricsSink = {
      add: () => this.adds.inc(labels),
      lowPriorityAdd: () => this.lowPriorityAdds.inc(labels),
      depth: (n) => this.depth.set(labels, n),
      queueLatency: (seconds) => this.queueDuration.observe(labels, seconds),
      workDuration: (seconds) => this.workDuration.observe(labels, seconds),
      retry: () => this.retries.inc(labels),
    };
    return {
      queue,
      activeWorkers: (delta) => this.activeWorkers.inc({ controller }, delta),
      streamFault: (stream, fault) => this.streamFaults.inc({ controller, stream, fault }),
      retriesExhausted: () => this.retriesExhausted.inc({ controller }),
      reconciled: (outcome: ReconcileOutcome, seconds: number, error?: Error) => {
        this.reconcileTime.observe({ controller }, seconds);
        const result = outcome === 'terminal_error' || outcome === 'timeout' ? 'error' : outcome;
        this.reconcileTotal.inc({ controller, result });
        if (result === 'error') this.reconcileErrors.inc({ controller });
        if (outcome === 'terminal_error') this.terminalErrors.inc({ controller });
        if (outcome === 'timeout') this.timeouts.inc({ controller });
        if (isProgrammingError(error)) this.panics.inc({ controller });
      },
    };
  }

  /** The sink of the Event recorder: Events written and dropped. */
  eventSink(): EventRecorderMetrics {
    return {
      written: (verb) => this.eventsWritten.inc({ verb }),
      dropped: (reason) => this.eventsDropped.inc({ reason }),
    };
  }

  /** The sink of the outage gate: whether reconciles are held for want of an API server. */
  outageSink(): OutageMetrics {
    return {
      holding: (held) => {
        this.apiServerUnreachable.set(held ? 1 : 0);
        if (held) this.apiServerOutages.inc();
      },
    };
  }

  /** The sink of the webhook server: requests per path (`webhook`), their latency and status, denials. */
  webhookSink() {
    return {
      started: (webhook: string) => this.webhookInFlight.inc({ webhook }),
      finished: (webhook: string, code: number, seconds: number) => {
        this.webhookInFlight.dec({ webhook });
        this.webhookLatency.observe({ webhook }, seconds);
        this.webhookRequests.inc({ webhook, code: String(code) });
      },
      denied: (webhook: string, code: number) => this.webhookDenials.inc({ webhook, code: String(code) }),
      /** The paths served: their series exist from the start, at 0. */
      serving: (webhooks: readonly string[]) => {
        for (const webhook of webhooks) {
          this.webhookInFlight.set({ webhook }, 0);
          this.webhookLatency.zero({ webhook });
          this.webhookRequests.inc({ webhook, code: '200' }, 0);
        }
      },
    };
  }

  /** Reads a controller's queue for the unfinished-work gauges. */
  trackQueue(controller: string, queue: WorkQueue<string>): void {
    this.queues.set(controller, queue);
  }

  /** Reads, when scraped, the resources the API server throttles (Transport.throttledResources). */
  trackThrottling(read: () => readonly string[]): void {
    new Gauge({
      name: 'nestor_apiserver_throttled',
      help: '1 for a resource the API server throttles (answered 429): its requests go one at a time, widening as it answers',
      labelNames: ['resource'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const resource of read()) this.set({ resource }, 1);
      },
    });
  }

  /** Reads watch health when scraped. */
  trackWatches(source: () => WatchStatsSource[]): void {
    this.watches.add(source);
  }

  /** The sink of one shard of a ring: moves and passes (on the leader), hand-overs and cached objects (on each shard). */
  shardingSink(ring: string, shard: string): ShardingMetrics {
    const registers = [this.registry];
    const moves = new Counter({
      name: 'nestor_shard_moves_total',
      help: 'Shard label writes of the assigner: assign (a new object, or one of a dead shard) or drain (a live shard asked to let go)',
      labelNames: ['ring', 'type'],
      registers,
    });
    const passes = new Histogram({
      name: 'nestor_shard_rebalance_duration_seconds',
      help: 'Rebalance passes of the assigner over every sharded object: a metadata LIST and the moves it planned',
      labelNames: ['ring'],
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    });
    const handovers = new Counter({
      name: 'nestor_shard_handovers_total',
      help: 'Objects this shard handed over to another after a drain request',
      labelNames: ['ring', 'shard'],
      registers,
    });
    const drains = new Histogram({
      name: 'nestor_shard_drain_duration_seconds',
      help: 'From the leader asking this shard to let an object go to the hand-over (waiting for its running reconcile), on the leader clock',
      labelNames: ['ring', 'shard'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    let read: () => number = () => 0;
    new Gauge({
      name: 'nestor_shard_objects',
      help: 'Objects of sharded kinds this shard caches and reconciles',
      labelNames: ['ring', 'shard'],
      registers,
      collect() {
        this.set({ ring, shard }, read());
      },
    });
    for (const type of ['assign', 'drain']) moves.inc({ ring, type }, 0);
    handovers.inc({ ring, shard }, 0);
    passes.zero({ ring });
    drains.zero({ ring, shard });
    return {
      moved: (type) => moves.inc({ ring, type }),
      rebalanced: (seconds) => passes.observe({ ring }, seconds),
      handedOver: (waitedSeconds) => {
        handovers.inc({ ring, shard });
        if (waitedSeconds !== undefined) drains.observe({ ring, shard }, waitedSeconds);
      },
      objects: (source) => {
        read = source;
      },
    };
  }

  setLeader(name: string, leading: boolean): void {
    this.leader.set({ name }, leading ? 1 : 0);
  }

  /** The text exposition format, for GET /metrics. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
