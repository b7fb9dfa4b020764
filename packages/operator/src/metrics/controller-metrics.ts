import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { prom } from './prom-client.js';
import type { ControllerMetricsSink, ReconcileOutcome } from '../runtime/controller/reconcile-loop.js';
import type { QueueMetricsSink, WorkQueue } from '../runtime/queue/queue.js';

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

/** controller-runtime's reconcile metrics and client-go's workqueue metrics, per controller. */
export class ControllerMetrics {
  private readonly queues = new Map<string, WorkQueue<string>>();
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
  private readonly retriesExhausted: Counter<'controller'>;
  private readonly fenced: Counter<'controller'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const queueLabels = ['name', 'controller'] as const;
    this.reconcileTotal = new prom.Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new prom.Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.terminalErrors = new prom.Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.panics = new prom.Counter({
      name: 'controller_runtime_reconcile_panics_total',
      help: 'Total number of reconciliation panics (TypeError, ReferenceError, RangeError, SyntaxError) per controller',
      labelNames: ['controller'],
      registers,
    });
    this.timeouts = new prom.Counter({
      name: 'controller_runtime_reconcile_timeouts_total',
      help: 'Total number of reconciliation timeouts per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTime = new prom.Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.maxConcurrent = new prom.Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });
    this.activeWorkers = new prom.Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
    this.streamFaults = new prom.Counter({
      name: 'nestor_controller_stream_faults_total',
      help: 'Events skipped because a predicate or mapper threw or a request was invalid, and sources subscribed again after they failed or completed, per controller and stream',
      labelNames: ['controller', 'stream', 'fault'],
      registers,
    });
    this.depth = new prom.Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: queueLabels,
      registers,
    });
    this.adds = new prom.Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: queueLabels,
      registers,
    });
    this.lowPriorityAdds = new prom.Counter({
      name: 'nestor_workqueue_low_priority_adds_total',
      help: "Adds at low priority, counted in workqueue_adds_total too: watch events that echo the controller's own writes, queued behind the other changes",
      labelNames: queueLabels,
      registers,
    });
    this.queueDuration = new prom.Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: queueLabels,
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.workDuration = new prom.Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: queueLabels,
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.retries = new prom.Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: queueLabels,
      registers,
    });
    const queues = this.queues;
    new prom.Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: 'How many seconds of work has been done that is in progress and has not been observed by work_duration',
      labelNames: queueLabels,
      registers,
      collect() {
        for (const [name, queue] of queues) this.set({ name, controller: name }, queue.unfinishedWorkSeconds());
      },
    });
    new prom.Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running',
      labelNames: queueLabels,
      registers,
      collect() {
        for (const [name, queue] of queues)
          this.set({ name, controller: name }, queue.longestRunningProcessorSeconds());
      },
    });
    this.retriesExhausted = new prom.Counter({
      name: 'nestor_reconcile_retries_exhausted_total',
      help: 'Objects a controller gave up on after maxRetries failed reconciles in a row (retried again when they change)',
      labelNames: ['controller'],
      registers,
    });
    this.fenced = new prom.Counter({
      name: 'nestor_reconcile_fenced_total',
      help: 'Reconciles stopped by the write fence because this replica no longer holds the Lease (leader or shard): not errors, not retried here; the replica that holds it reconciles the object',
      labelNames: ['controller'],
      registers,
    });
  }

  /** The sink a controller reports to; its queue's gauges are read from `queue` when scraped. */
  sink(controller: string, maxConcurrentReconciles: number): ControllerMetricsSink {
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
      this.fenced,
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
      // Not in reconcile_total nor reconcile_time: the run was cut short by the fence, not finished.
      fenced: () => this.fenced.inc({ controller }),
      reconciled: (outcome: Exclude<ReconcileOutcome, 'fenced'>, seconds: number, error?: Error) => {
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

  /** Reads a controller's queue for the unfinished-work gauges. */
  trackQueue(controller: string, queue: WorkQueue<string>): void {
    this.queues.set(controller, queue);
  }

  /** Stops reading it: the controller is gone (a fleet's member disengaged), and so must its queue be. */
  untrackQueue(controller: string): void {
    this.queues.delete(controller);
  }
}
