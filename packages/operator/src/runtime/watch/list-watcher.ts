import {
  DEFAULT_HTTP2_MIN_WATCH_TIMEOUT_SECONDS,
  DEFAULT_MIN_WATCH_TIMEOUT_SECONDS,
  isUnreachable,
  type Clock,
  type KubeObject,
  METADATA_WATCH_ACCEPT,
  type Query,
  type ResourceDescriptor,
  isBuiltInKind,
  resendWhenReady,
  resourceName,
  resourcePath,
  type RuntimeLogger,
  SentDuringOutage,
  silentLogger,
  sleepUntilReady,
  systemClock,
} from '@nestor/core';
import { KnownObjects } from './known-objects.js';
import { ListPager, type ListSink } from './list-pager.js';
import { RelistPolicy } from './relist-policy.js';
import { INITIAL_EVENTS_QUERY, NoInitialEvents, StreamedSync } from './streamed-sync.js';
import { WatchDecoder, type RawWatchEvent } from './watch-decoder.js';
import type { WatchEvent } from './watch-event.js';
import type { WatchOptions, WatchTransport } from './watch-options.js';
import { createWatchStats, type WatchStats } from './watch-stats.js';
import { WatchedObjects } from './watched-objects.js';
import { stallLimitMs, WatchStalledError, Watchdog } from './watchdog.js';

/**
 * The list+watch loop behind watch(): one per subscription. Runs until `signal` aborts;
 * every failure is reported and retried, none ends it. It sends the requests; whether to
 * relist, from where and when is the RelistPolicy's, what arrives is applied by
 * WatchedObjects, LISTs are paged by the ListPager, streamed syncs are the StreamedSync's.
 */
export class ListWatcher<T extends KubeObject> {
  private readonly path: string;
  private readonly description: string;
  private readonly decoder: WatchDecoder<T>;
  private readonly pager: ListPager<T>;
  private readonly streamed: StreamedSync;
  private readonly policy: RelistPolicy;
  private readonly stats: WatchStats;
  private readonly log: RuntimeLogger;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly strip: boolean;
  /** A built-in kind, listed and watched in protobuf when the transport allows it. */
  private readonly protobuf: boolean;
  private readonly metadataOnly: boolean;
  private readonly selectors: Query;
  private readonly objects: WatchedObjects<T>;
  /** WATCH requests so far, for stats. */
  private watches = 0;
  /**
   * The next relist's floor: the resourceVersion its watch ended at (410 Gone, "too old",
   * or broken twice there). The LIST asks for a state not older than it, which the API
   * server serves from its watch cache, as client-go's reflector relists after a watch
   * error, where a consistent read would read every object from etcd again; it cannot go
   * back in time. Used once.
   */
  private relistFrom?: string;

  /**
   * `emit` gets each event with its object's key and the object it replaces or deletes (the
   * last one emitted under that key). `store` holds what was emitted, by key: an informer
   * passes its own and reads it, never writes it. `onProgress` is told each time the
   * resourceVersion moves (`stats.resourceVersion`), bookmarks included.
   */
  constructor(
    private readonly transport: WatchTransport,
    resource: ResourceDescriptor<T>,
    private readonly options: WatchOptions,
    emit: (event: WatchEvent<T>, key?: string, old?: T) => void,
    private readonly signal: AbortSignal,
    store?: Map<string, T>,
    onProgress?: () => void,
  ) {
    const { namespace, labelSelector, fieldSelector } = options;
    this.path = resourcePath(resource, namespace);
    this.selectors = { labelSelector, fieldSelector };
    this.description = [
      resourceName(resource),
      resource.namespaced && namespace ? `in ${namespace}` : '',
      labelSelector ? `labels ${labelSelector}` : '',
      fieldSelector ? `fields ${fieldSelector}` : '',
      options.metadataOnly ? '(metadata only)' : '',
    ]
      .filter(Boolean)
      .join(' ');
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.policy = new RelistPolicy({ clock: this.clock, random: this.random, backoff: options.backoff });
    this.stats = options.stats ?? createWatchStats();
    this.log = options.logger ?? silentLogger;
    this.strip = options.stripManagedFields ?? true;
    this.metadataOnly = options.metadataOnly ?? false;
    this.decoder = new WatchDecoder(resource, this.path, {
      strip: this.strip,
      metadataOnly: this.metadataOnly,
      transform: options.transform,
      ...(options.keep ? { keep: options.keep } : {}),
    });
    this.protobuf = !this.metadataOnly && isBuiltInKind(this.decoder.apiVersion, resource.kind);
    this.streamed = new StreamedSync(options.streamingList ?? false, this.description, this.stats, this.log);
    this.pager = new ListPager(transport, this.path, {
      selectors: this.selectors,
      pageSize: options.pageSize ?? 500,
      protobuf: this.protobuf,
      dropManagedFields: this.strip,
      metadataOnly: this.metadataOnly,
      apiVersion: this.decoder.apiVersion,
      kind: resource.kind,
      description: this.description,
      log: this.log,
      signal,
    });
    this.objects = new WatchedObjects({
      known: new KnownObjects(store),
      decoder: this.decoder,
      policy: this.policy,
      streamed: this.streamed,
      emit,
      signal,
      stats: this.stats,
      log: this.log,
      clock: this.clock,
      description: this.description,
      ...(onProgress ? { onProgress } : {}),
      ...(options.replaceKept ? { replaceKept: true } : {}),
    });
  }

  /** Never rejects. */
  async run(): Promise<void> {
    while (!this.signal.aborted) {
      try {
        // Without a resourceVersion the watch below streams the state first, or a LIST does.
        if (this.objects.resourceVersion === undefined && !this.streamNext()) await this.list();
        if (!this.signal.aborted) await this.watch();
      } catch (error) {
        if (this.signal.aborted) return;
        if (error instanceof NoInitialEvents) {
          this.streamed.fallBack(error);
          continue;
        }
        if (error instanceof SentDuringOutage) {
          this.log.info(`${this.objects.phase} of ${this.description}: ${error.message}`);
          this.policy.reset();
          continue;
        }
        await this.recover(error);
      }
    }
  }

  /** Whether the next sync is streamed; a LIST that failed part way is then not resumed. */
  private streamNext(): boolean {
    const stream = this.streamed.next();
    if (stream) this.pager.forget();
    return stream;
  }

  private async list(): Promise<void> {
    this.objects.phase = 'list';
    const from = {
      cache: this.objects.syncs === 0 && (this.options.firstListFromCache ?? true),
      notOlderThan: this.relistFrom,
    };
    this.relistFrom = undefined;
    const outage = this.outageScope();
    const sink: ListSink<T> = {
      begin: () => this.objects.beginSync(),
      observe: (pass, raw) => this.objects.observe(pass, raw),
      refused: (error, pass) => this.objects.skipRefused(error, pass),
    };
    const listed = await this.pager
      .read(sink, from, outage)
      .catch((error: unknown) => {
        throw outage.reason() ?? error;
      })
      .finally(() => outage.answered());
    this.objects.endSync(listed.pass, listed.resourceVersion, 'list');
  }

  /**
   * One WATCH. Without a resourceVersion it is a streamed sync first (WatchList, KEP-3157):
   * the server sends the current state as ADDED events, then a bookmark marking their end,
   * and the same stream goes on as an ordinary watch.
   */
  private async watch(): Promise<void> {
    let pass = this.objects.resourceVersion === undefined ? this.objects.beginSync() : undefined;
    this.objects.phase = pass ? 'list' : 'watch';
    if (this.watches++ > 0) this.stats.restarts++;
    const minTimeout =
      this.options.minWatchTimeoutSeconds ??
      (this.transport.checksLiveness ? DEFAULT_HTTP2_MIN_WATCH_TIMEOUT_SECONDS : DEFAULT_MIN_WATCH_TIMEOUT_SECONDS);
    const timeoutSeconds = Math.floor(minTimeout * (1 + this.random()));
    const stallMs = stallLimitMs(timeoutSeconds, this.options.stallTimeoutMs);
    const abort = new AbortController();
    const forward = () => abort.abort(this.signal.reason);
    this.signal.addEventListener('abort', forward, { once: true });
    const outage = this.outageScope(abort);
    const watchdog = new Watchdog(this.clock, stallMs, () =>
      abort.abort(new WatchStalledError(`no event for ${stallMs} ms`)),
    );
    const startedAt = this.clock.now();
    let received = 0;
    try {
      const query: Query = {
        ...this.selectors,
        watch: true,
        allowWatchBookmarks: true,
        ...(pass ? INITIAL_EVENTS_QUERY : { resourceVersion: this.objects.resourceVersion }),
        timeoutSeconds,
      };
      const stream = this.transport.stream<RawWatchEvent>(this.path, query, abort.signal, {
        protobuf: this.protobuf,
        dropManagedFields: this.strip,
        // Open again after failures: healthy (/readyz) before its first event, which a quiet
        // namespace may not send for a minute. A streamed sync is healthy once it synced.
        onOpen: () => {
          outage.answered();
          if (!pass) this.stats.failures = 0;
        },
        ...(this.metadataOnly ? { accept: METADATA_WATCH_ACCEPT } : {}),
      });
      for await (const event of stream) {
        watchdog.touch();
        // An ERROR event is no sign of a working watch: it does not end the failures in a row.
        if (received++ === 0 && event.type !== 'ERROR') this.stats.failures = 0;
        if (event.refused) this.objects.handleRefused(event, event.refused, pass);
        else if (!pass) this.objects.handle(event);
        else if (this.objects.initialEvent(pass, event)) {
          pass = undefined;
          this.objects.phase = 'watch';
        }
      }
    } catch (error) {
      if (abort.signal.reason instanceof WatchStalledError) throw abort.signal.reason;
      const resend = outage.reason();
      if (resend) {
        if (--this.watches > 0) this.stats.restarts--; // the server never served it
        throw resend;
      }
      const refusal = pass ? this.streamed.refusal(error) : undefined;
      if (refusal) {
        if (--this.watches > 0) this.stats.restarts--; // refused: no watch was opened
        throw refusal;
      }
      throw error;
    } finally {
      outage.answered();
      watchdog.stop();
      this.signal.removeEventListener('abort', forward);
    }
    if (pass) throw this.streamed.endedEarly();
    // As client-go: a stream that ends at once with nothing in it is a failure, not a loop.
    if (received === 0 && this.clock.now() - startedAt < 1000) {
      throw new Error('very short watch: the API server ended it at once without an event');
    }
    this.log.debug(`watch of ${this.description} ended after ${received} event(s); resuming`);
  }

  private async recover(thrown: unknown): Promise<void> {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    const plan = this.policy.failed({
      error,
      phase: this.objects.phase,
      resourceVersion: this.objects.resourceVersion,
      listResumes: this.pager.resuming,
    });
    this.relistFrom = plan.notOlderThan;
    if (plan.relist) this.objects.resourceVersion = undefined;
    const { retryInMs } = plan;
    const attempt = ++this.stats.failures;
    const connectivity = this.transport.connectivity;
    // No response, or an answer while the server is not ready again (403 before its RBAC
    // has synced, 503): the outage's failure, not this watch's. It retries when the outage
    // gate's probe (every second) finds the server ready, and its backoff starts afresh then.
    const outage = connectivity !== undefined && (isUnreachable(error) || connectivity.inOutage);
    this.stats.lastError = error.message;
    if (plan.gone) {
      // Routine (etcd compacts history): relist, and emit what changed meanwhile.
      this.log.info(`watch of ${this.description}: resourceVersion expired; listing again in ${retryInMs} ms`);
    } else {
      const how = plan.relist
        ? 'listing again'
        : this.pager.resuming
          ? 'resuming at the page that failed'
          : this.objects.phase === 'watch'
            ? 'resuming'
            : 'retrying';
      this.log.warn(
        `${this.objects.phase} of ${this.description} failed (attempt ${attempt}); ${how} in ${retryInMs} ms${plan.asAsked && retryInMs > 0 ? ' as the server asked' : ''}${outage ? ' or once the API server is ready' : ''}: ${error.message}`,
      );
      this.options.onError?.(error, { phase: this.objects.phase, watch: this.description, attempt, retryInMs });
    }
    if (retryInMs === 0) return;
    const wait = { signal: this.signal, clock: this.clock, connectivity: outage ? connectivity : undefined };
    if ((await sleepUntilReady(retryInMs, wait)) === 'ready') this.policy.reset();
  }

  /**
   * For a request about to be sent: during an outage, a signal that aborts it with
   * SentDuringOutage when the outage gate finds the server ready, unless its answer began
   * first (`answered()`); `reason()` then says to send it again. Outside an outage, the
   * watch's own signal. `into`: abort that controller instead.
   */
  private outageScope(into?: AbortController): {
    signal: AbortSignal;
    answered: () => void;
    reason: () => SentDuringOutage | undefined;
  } {
    let abort = into;
    let resend: SentDuringOutage | undefined;
    const resendOn = (reason: SentDuringOutage) => {
      resend = reason;
      abort?.abort(reason);
    };
    const answered = resendWhenReady(this.transport.connectivity, resendOn, this.signal);
    if (!answered) return { signal: into?.signal ?? this.signal, answered: () => {}, reason: () => undefined };
    abort ??= new AbortController();
    return {
      signal: into ? into.signal : AbortSignal.any([this.signal, abort.signal]),
      answered,
      reason: () => resend,
    };
  }
}
