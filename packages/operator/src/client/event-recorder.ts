import { hostname } from 'node:os';
import {
  DEFAULT_FIELD_MANAGER,
  KubeApiError,
  silentLogger,
  systemClock,
  type Clock,
  type KubeObject,
  type RuntimeLogger,
  type TimerHandle,
  type Transport,
} from '@nestor/core';
import { EventSeriesCache, ObjectTokenBuckets, type EventSeries, type EventType } from './event-series.js';
import { limitBytes, qualifiedName, referenceTo } from './event-fields.js';
import { EventSink, type EventsApi } from './event-sink.js';
import { currentRun } from './run-context.js';
import { fenceOf, type WriteFence } from './write-fence.js';

// client-go's EventRecorder and broadcaster, for one event loop. record() is synchronous and
// O(1): it counts a repeat into its series or queues a new Event, and returns. Writes happen
// later, a few at a time, each bounded by a timeout, so recording never fails or slows the
// reconcile that records: a refused, slow or unreachable API server costs Events, counted,
// never reconcile time. Memory is bounded: the queue, the series cache and the per-object
// token buckets are capped.

/** Why an Event was not written (nestor_events_dropped_total's reason). */
export type EventDropReason =
  /** The queue was full. */
  | 'queue-full'
  /** Its object used up its token bucket (a new Event; repeats wait for a token instead). */
  | 'rate-limited'
  /** The API server refused or failed the write, or it timed out. */
  | 'failed'
  /** This replica may not write (it lost the lease). */
  | 'fenced'
  /** Recorded after close(), or still unwritten when close()'s bound ran out. */
  | 'shutdown'
  /** No object to be about (no metadata.name), or a type other than Normal/Warning. */
  | 'invalid';

/** Where the recorder reports; OperatorMetrics binds it to Prometheus. */
export interface EventRecorderMetrics {
  written(verb: 'create' | 'patch'): void;
  dropped(reason: EventDropReason): void;
}

export interface EventRecorderOptions {
  /** reportingController outside a reconcile (in one: the controller's name). Default 'nestor'. */
  reportingController?: string;
  /** reportingInstance (default: POD_NAME from the environment, else the host name). */
  reportingInstance?: string;
  /** 'auto' (default): events.k8s.io/v1 when the API server serves it, else core/v1. */
  api?: EventsApi | 'auto';
  /** Repeats within this long of the last one are counted into it (default 6 min, client-go's). */
  aggregationWindowMs?: number;
  /** Writes an object may make at once (default 25, client-go's spam filter). */
  burst?: number;
  /** Writes per second an object earns back (default 1/300: one per 5 min, client-go's). */
  perObjectQps?: number;
  /** Series and token buckets kept (default 4096 each, client-go's LRU size). */
  cacheSize?: number;
  /** Events waiting to be written; past this, new ones are dropped and counted (default 1000). */
  maxQueue?: number;
  /** Writes in flight at once (default 4). */
  concurrency?: number;
  /** Bound on each write (default 10 s). */
  requestTimeoutMs?: number;
  /**
   * Checked before each write: a replica that lost its lease writes no Events. Asked for
   * the fence of the controller that recorded the Event (`fence.of`) when it has one.
   */
  fence?: WriteFence;
  clock?: Clock;
  logger?: RuntimeLogger;
  metrics?: EventRecorderMetrics;
}

export interface RecordOptions {
  /** What was done or failed (events.k8s.io's `action`; default: the reason). */
  action?: string;
  /** A second object the Event is about (a Pod the Deployment scaled, say). */
  related?: KubeObject;
  /** Overrides the reporting controller (default: the reconciling controller's name). */
  reportingController?: string;
  /**
   * The controller that records it: its Lease fences the write and its name reports the
   * Event (default: the controller whose reconcile or timer runs the caller, if any).
   */
  controller?: string;
}

/** The recorder's counts since it started (also in metrics). */
export interface EventRecorderStats {
  recorded: number;
  /** Repeats counted into an existing Event. */
  aggregated: number;
  created: number;
  patched: number;
  dropped: Record<EventDropReason, number>;
  /** Events waiting: queued, deferred for a token, or being written. */
  pending: number;
}

/**
 * Records Events about objects, best effort: see the file's comment. One per process is
 * enough (the manager has one; KubeClient.recordEvent uses it). Call close() on shutdown
 * to flush what is pending within a bound.
 */
export class EventRecorder {
  private readonly clock: Clock;
  private readonly log: RuntimeLogger;
  private readonly sink: EventSink;
  private readonly series: EventSeriesCache;
  private readonly buckets: ObjectTokenBuckets;
  private readonly queue = new Set<EventSeries>();
  private readonly deferred = new Set<EventSeries>();
  private readonly writing = new Set<EventSeries>();
  private readonly writes = new Set<Promise<void>>();
  private readonly maxQueue: number;
  private readonly concurrency: number;
  private readonly defaultController: string;
  private readonly abort = new AbortController();
  private readonly idleWaiters = new Set<() => void>();
  private pumpScheduled = false;
  private deferTimer: TimerHandle | undefined;
  private closed = false;
  private flushing = false;
  /** Failures already logged, by kind: each kind is logged once, then counted only. */
  private readonly warned = new Set<string>();
  private readonly counts: Omit<EventRecorderStats, 'pending'> = {
    recorded: 0,
    aggregated: 0,
    created: 0,
    patched: 0,
    dropped: { 'queue-full': 0, 'rate-limited': 0, failed: 0, fenced: 0, shutdown: 0, invalid: 0 },
  };

  constructor(
    transport: Pick<Transport, 'json'>,
    private readonly options: EventRecorderOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.log = options.logger ?? silentLogger;
    const cacheSize = options.cacheSize ?? 4096;
    this.series = new EventSeriesCache(options.aggregationWindowMs ?? 6 * 60_000, cacheSize);
    this.buckets = new ObjectTokenBuckets(options.burst ?? 25, options.perObjectQps ?? 1 / 300, cacheSize);
    this.maxQueue = options.maxQueue ?? 1000;
    this.concurrency = options.concurrency ?? 4;
    this.defaultController = qualifiedName(options.reportingController ?? DEFAULT_FIELD_MANAGER);
    const instance = options.reportingInstance ?? (process.env.POD_NAME || hostname());
    this.sink = new EventSink(transport, {
      reportingInstance: instance.slice(0, 128),
      ...(options.api ? { api: options.api } : {}),
      ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    });
  }

  /**
   * Records an Event about `object` and returns at once; it is written in the background.
   * A repeat (same object, type, reason, action and note within the window) counts into the
   * Event already recorded instead of making a new one.
   */
  record(object: KubeObject, type: EventType, reason: string, note: string, options: RecordOptions = {}): void {
    const now = this.clock.now();
    this.counts.recorded++;
    if (this.closed) return this.drop('shutdown');
    const meta = object.metadata;
    if (!meta?.name || (type !== 'Normal' && type !== 'Warning')) {
      this.warnOnce(
        'invalid',
        `an Event (${type} ${reason}) was not recorded: ${meta?.name ? 'its type must be Normal or Warning' : 'its object has no metadata.name'}`,
      );
      return this.drop('invalid');
    }
    const scope = options.controller ?? currentRun()?.controller;
    const reportingController = qualifiedName(options.reportingController ?? scope ?? this.defaultController);
    const shortReason = limitBytes(reason, 128);
    const action = limitBytes(options.action ?? reason, 128);
    const shortNote = limitBytes(note, 1024);
    const objectKey = `${object.apiVersion}/${object.kind}/${meta.namespace ?? ''}/${meta.name}/${meta.uid ?? ''}`;
    const key = `${objectKey}\0${type}\0${shortReason}\0${action}\0${reportingController}\0${shortNote}`;

    const repeat = this.series.repeat(key, now);
    if (repeat) {
      this.counts.aggregated++;
      if (repeat.state === 'idle') this.enqueue(repeat);
      return;
    }
    if (this.queue.size >= this.maxQueue) return this.drop('queue-full');
    const series: EventSeries = {
      key,
      objectKey,
      namespace: meta.namespace || 'default',
      regarding: referenceTo(object),
      ...(options.related ? { related: referenceTo(options.related) } : {}),
      type,
      reason: shortReason,
      action,
      note: shortNote,
      reportingController,
      ...(scope !== undefined ? { scope } : {}),
      firstTime: now,
      lastTime: now,
      count: 1,
      written: 0,
      state: 'idle',
    };
    this.series.add(series);
    this.enqueue(series);
  }

  /** Counts so far, and what is pending now. */
  get stats(): EventRecorderStats {
    return {
      ...this.counts,
      dropped: { ...this.counts.dropped },
      pending: this.queue.size + this.deferred.size + this.writing.size,
    };
  }

  /**
   * Stops recording and writes what is pending (repeats waiting for a token included),
   * for at most `graceMs`; then aborts the writes in flight. Resolves true when everything
   * was written or failed in time.
   */
  async close(graceMs = 5_000): Promise<boolean> {
    if (!this.closed) {
      this.closed = true;
      this.flushing = true;
      if (this.deferTimer !== undefined) this.clock.clearTimeout(this.deferTimer);
      this.deferTimer = undefined;
      for (const series of this.deferred) {
        series.state = 'queued';
        this.queue.add(series);
      }
      this.deferred.clear();
      this.pump();
    }
    const done = this.idle() ? true : await this.idleWithin(graceMs);
    if (!done) {
      for (const series of this.queue) {
        series.state = 'idle';
        this.drop('shutdown');
      }
      this.queue.clear();
      this.abort.abort(new Error('the event recorder closed'));
      // The aborted writes settle at once (the transport honours the signal): nothing pends after close.
      await Promise.allSettled([...this.writes]);
    }
    return done;
  }

  private enqueue(series: EventSeries): void {
    if (this.queue.size >= this.maxQueue) {
      // A repeat whose write cannot queue stays counted in memory; its next repeat tries again.
      this.drop('queue-full');
      if (series.written === 0) this.series.forget(series);
      return;
    }
    series.state = 'queued';
    this.queue.add(series);
    if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      // After the current task: a burst recorded in one go becomes one write.
      setImmediate(() => {
        this.pumpScheduled = false;
        this.pump();
      });
    }
  }

  /** Starts writes while a writer is free. */
  private pump(): void {
    while (this.writing.size < this.concurrency && this.queue.size > 0) {
      const series = this.queue.values().next().value as EventSeries;
      this.queue.delete(series);
      if (!this.flushing && !this.buckets.take(series.objectKey, this.clock.now())) {
        if (series.written === 0) {
          series.state = 'idle';
          this.series.forget(series);
          this.drop('rate-limited');
        } else this.defer(series);
        continue;
      }
      try {
        // For the controller that recorded the Event, not whichever code runs the batch.
        if (this.options.fence) fenceOf(this.options.fence, series.scope).assertWritable();
      } catch {
        series.state = 'idle';
        if (series.written === 0) this.series.forget(series);
        this.drop('fenced');
        continue;
      }
      const write = this.write(series);
      this.writes.add(write);
      void write.finally(() => this.writes.delete(write));
    }
    if (this.idle()) this.notifyIdle();
  }

  private async write(series: EventSeries): Promise<void> {
    series.state = 'writing';
    this.writing.add(series);
    const count = series.count;
    const creating = series.written === 0;
    try {
      await this.sink.write(series, this.abort.signal);
      series.written = count;
      this.counts[creating ? 'created' : 'patched']++;
      this.options.metrics?.written(creating ? 'create' : 'patch');
    } catch (error) {
      if (!creating && error instanceof KubeApiError && error.status === 404) {
        // The Event expired (the API server keeps them an hour): the next write creates it anew.
        series.name = undefined;
        series.written = 0;
      } else {
        // Best effort: what failed is dropped, not retried (the next repeat writes again).
        if (this.abort.signal.aborted) this.drop('shutdown');
        else this.failed(error, series);
        if (creating) {
          this.series.forget(series);
          series.count = 0;
        } else series.written = count;
      }
    } finally {
      this.writing.delete(series);
      series.state = 'idle';
      if (series.count > series.written && !this.abort.signal.aborted) this.enqueue(series);
      this.pump();
    }
  }

  /** A repeat without a token waits for one: its count is kept, and written when a token comes. */
  private defer(series: EventSeries): void {
    if (this.deferred.size >= this.maxQueue) {
      // As many repeats wait for tokens as Events may wait to be written: past that, dropped.
      series.state = 'idle';
      series.written = series.count;
      this.drop('rate-limited');
      return;
    }
    series.state = 'deferred';
    this.deferred.add(series);
    if (this.deferTimer !== undefined) return;
    this.deferTimer = this.clock.setTimeout(() => {
      this.deferTimer = undefined;
      const due = [...this.deferred];
      this.deferred.clear();
      for (const s of due) {
        s.state = 'idle';
        this.enqueue(s);
      }
    }, this.buckets.refillMs);
  }

  private failed(error: unknown, series: EventSeries): void {
    this.drop('failed');
    const status = error instanceof KubeApiError ? error.status : undefined;
    const why = (error as Error).message;
    if (status === 403) {
      this.warnOnce(
        '403',
        `the API server refuses this operator's Events (403): grant create and patch on events (events.k8s.io and core); further refusals are only counted: ${why}`,
      );
    } else {
      this.warnOnce(
        `failed ${status ?? 'network'}`,
        `an Event about ${series.regarding.kind} ${series.regarding.name} was not written; further such failures are only counted: ${why}`,
      );
    }
  }

  private drop(reason: EventDropReason): void {
    this.counts.dropped[reason]++;
    this.options.metrics?.dropped(reason);
  }

  private warnOnce(kind: string, message: string): void {
    if (this.warned.has(kind)) return;
    this.warned.add(kind);
    this.log.warn(message);
  }

  private idle(): boolean {
    return this.queue.size === 0 && this.writing.size === 0 && (this.flushing || this.deferred.size === 0);
  }

  private notifyIdle(): void {
    for (const settle of this.idleWaiters) settle();
    this.idleWaiters.clear();
  }

  private idleWithin(graceMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const settle = () => {
        this.clock.clearTimeout(timer);
        resolve(true);
      };
      const timer = this.clock.setTimeout(() => {
        this.idleWaiters.delete(settle);
        resolve(false);
      }, graceMs);
      this.idleWaiters.add(settle);
    });
  }
}
