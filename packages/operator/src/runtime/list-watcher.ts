import {
  DEFAULT_HTTP2_MIN_WATCH_TIMEOUT_SECONDS,
  DEFAULT_MIN_WATCH_TIMEOUT_SECONDS,
  isUnreachable,
  type Clock,
  type KubeObject,
  METADATA_WATCH_ACCEPT,
  type ObjectRef,
  ObjectTooDeepError,
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
import { KnownObjects, type RelistPass } from './known-objects.js';
import { ListPager } from './list-pager.js';
import { RelistPolicy } from './relist-policy.js';
import { INITIAL_EVENTS_QUERY, NoInitialEvents, StreamedSync } from './streamed-sync.js';
import { WatchDecoder, type RawWatchEvent } from './watch-decoder.js';
import type { WatchEvent } from './watch-event.js';
import type { WatchOptions, WatchTransport } from './watch-options.js';
import { createWatchStats, type WatchStats } from './watch-stats.js';
import { stallLimitMs, WatchStalledError, Watchdog } from './watchdog.js';

/**
 * The list+watch loop behind watch(): one per subscription. Runs until `signal` aborts;
 * every failure is reported and retried, none ends it. What to retry, from where and when
 * is the RelistPolicy's; LISTs are the ListPager's, streamed syncs the StreamedSync's.
 */
export class ListWatcher<T extends KubeObject> {
  private readonly path: string;
  private readonly description: string;
  private readonly known: KnownObjects<T>;
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
  /** Where the next WATCH starts; undefined means a full sync (stream or LIST) first. */
  private resourceVersion?: string;
  private phase: 'list' | 'watch' = 'list';
  /** Complete syncs (streamed or listed) and WATCH requests so far, for stats. */
  private syncs = 0;
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
   * passes its own and reads it, never writes it.
   */
  constructor(
    private readonly transport: WatchTransport,
    resource: ResourceDescriptor<T>,
    private readonly options: WatchOptions,
    private readonly emit: (event: WatchEvent<T>, key?: string, old?: T) => void,
    private readonly signal: AbortSignal,
    store?: Map<string, T>,
  ) {
    this.known = new KnownObjects(store);
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
  }

  /** Never rejects. */
  async run(): Promise<void> {
    while (!this.signal.aborted) {
      try {
        // Without a resourceVersion the watch below streams the state first, or a LIST does.
        if (this.resourceVersion === undefined && !this.streamNext()) await this.list();
        if (!this.signal.aborted) await this.watch();
      } catch (error) {
        if (this.signal.aborted) return;
        if (error instanceof NoInitialEvents) {
          this.streamed.fallBack(error);
          continue;
        }
        if (error instanceof SentDuringOutage) {
          this.log.info(`${this.phase} of ${this.description}: ${error.message}`);
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

  /** Starts a full sync: what it returns decides what changed and what vanished. */
  private beginSync(): RelistPass<T> {
    this.phase = 'list';
    return this.known.relist();
  }

  /** Records a listed or streamed object; emits it when it is new or changed. */
  private observe(pass: RelistPass<T>, raw: KubeObject): void {
    if (this.signal.aborted) return; // the store stays as it was when the watch stopped
    const key = this.decoder.keyOf(raw.metadata as ObjectRef);
    const object = this.decoder.decode(raw);
    const type = pass.observe(key, object);
    if (type) this.emit({ type, object }, key, pass.replaced);
  }

  /** Ends a full sync: what it did not return is deleted, and the watch resumes from its resourceVersion. */
  private endSync(pass: RelistPass<T>, resourceVersion: string, by: 'list' | 'stream'): void {
    if (this.signal.aborted) return;
    for (const [key, object] of pass.vanished()) this.emit({ type: 'DELETED', object }, key, object);
    if (this.syncs++ > 0) this.stats.relists++;
    this.resourceVersion = resourceVersion;
    this.stats.resourceVersion = resourceVersion;
    this.stats.lastSyncAt = this.clock.now();
    this.stats.lastSyncBy = by;
    this.stats.failures = 0;
    this.emit({ type: 'SYNCED' });
  }

  private async list(): Promise<void> {
    this.phase = 'list';
    const from = {
      cache: this.syncs === 0 && (this.options.firstListFromCache ?? true),
      notOlderThan: this.relistFrom,
    };
    this.relistFrom = undefined;
    const outage = this.outageScope();
    let listed: Awaited<ReturnType<ListPager<T>['read']>>;
    try {
      listed = await this.pager.read(
        {
          begin: () => this.beginSync(),
          observe: (pass, raw) => this.observe(pass, raw),
          refused: (error, pass) => this.skipRefused(error, pass),
        },
        from,
        outage,
      );
    } catch (error) {
      throw outage.reason() ?? error;
    } finally {
      outage.answered();
    }
    this.endSync(listed.pass, listed.resourceVersion, 'list');
  }

  /**
   * One WATCH. Without a resourceVersion it is a streamed sync first (WatchList, KEP-3157):
   * the server sends the current state as ADDED events, then a bookmark marking their end,
   * and the same stream goes on as an ordinary watch.
   */
  private async watch(): Promise<void> {
    let pass = this.resourceVersion === undefined ? this.beginSync() : undefined;
    this.phase = pass ? 'list' : 'watch';
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
        ...(pass ? INITIAL_EVENTS_QUERY : { resourceVersion: this.resourceVersion }),
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
        if (event.refused) this.handleRefused(event, event.refused, pass);
        else if (!pass) this.handle(event);
        else if (this.initialEvent(pass, event)) {
          pass = undefined;
          this.phase = 'watch';
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

  /** An event of a streamed sync; true for the bookmark that ends the initial events. */
  private initialEvent(pass: RelistPass<T>, event: RawWatchEvent): boolean {
    const raw = event.object;
    switch (this.streamed.initialEvent(event)) {
      case 'object':
        this.observe(pass, raw);
        this.stats.lastEventAt = this.clock.now();
        return false;
      case 'end':
        this.stats.bookmarks++;
        this.stats.lastEventAt = this.clock.now();
        this.endSync(pass, raw.metadata?.resourceVersion ?? '', 'stream');
        return true;
      case 'error':
        throw this.broken(this.decoder.errorOf(raw));
    }
  }

  private handle(event: RawWatchEvent): void {
    const raw = event.object;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED': {
        if (typeof raw?.metadata?.name !== 'string') {
          throw this.broken(new Error(`watch of ${this.description}: ${event.type} event without an object's name`));
        }
        if (this.signal.aborted) return;
        const key = this.decoder.keyOf(raw.metadata as ObjectRef);
        const resourceVersion = raw.metadata?.resourceVersion;
        const object = this.decoder.decode(raw);
        const old = event.type === 'DELETED' ? this.known.delete(key) : this.known.set(key, object);
        this.advance(resourceVersion);
        this.stats.events++;
        this.emit({ type: event.type, object }, key, old);
        return;
      }
      case 'BOOKMARK':
        this.advance(raw.metadata?.resourceVersion);
        this.stats.bookmarks++;
        return;
      case 'ERROR':
        throw this.broken(this.decoder.errorOf(raw));
      default:
        this.log.warn(`watch of ${this.description}: ignoring an event of unknown type ${String(event.type)}`);
    }
  }

  /**
   * An event whose object the protobuf decoder refused (nested past MAX_OBJECT_DEPTH). The
   * API server stored it, so it never ends the watch: its metadata was read, so a deletion
   * applies and the watch moves past it; otherwise it is logged and skipped, and the cache
   * keeps the last version it could decode. (Not read again as JSON: a handler's recursive
   * code, JSON.stringify included, overflows the stack on such an object.)
   */
  private handleRefused(event: RawWatchEvent, error: ObjectTooDeepError, pass?: RelistPass<T>): void {
    if (pass) {
      if (event.type !== 'ADDED') return void this.initialEvent(pass, event);
      this.skipRefused(error, pass);
      this.stats.lastEventAt = this.clock.now();
      return;
    }
    this.advance(event.object.metadata?.resourceVersion);
    this.stats.events++;
    if (event.type !== 'DELETED' || !event.object.metadata?.name) return this.skipRefused(error);
    if (this.signal.aborted) return;
    const key = this.decoder.keyOf(event.object.metadata as ObjectRef);
    const known = this.known.delete(key);
    if (known) this.emit({ type: 'DELETED', object: known }, key, known);
  }

  /** Logs a refused object; a list or stream sync keeps it as it was known, not as vanished. */
  private skipRefused(error: ObjectTooDeepError, pass?: RelistPass<T>): void {
    this.stats.refused = (this.stats.refused ?? 0) + 1;
    this.log.error(
      `${this.phase} of ${this.description}: ${error.message}. Skipped: the watch goes on, the cache keeps the last version it decoded, if any`,
    );
    if (pass && error.object.metadata?.name) pass.keep(this.decoder.keyOf(error.object.metadata as ObjectRef));
  }

  /** The stream broke (an ERROR event, an unreadable event): the policy decides how to go on. */
  private broken(error: Error): Error {
    this.policy.broke(error, this.resourceVersion);
    return error;
  }

  private advance(resourceVersion: string | undefined): void {
    if (resourceVersion) this.resourceVersion = this.stats.resourceVersion = resourceVersion;
    this.policy.progressed();
    this.stats.lastEventAt = this.clock.now();
  }

  private async recover(thrown: unknown): Promise<void> {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    const plan = this.policy.failed({
      error,
      phase: this.phase,
      resourceVersion: this.resourceVersion,
      listResumes: this.pager.resuming,
    });
    this.relistFrom = plan.notOlderThan;
    if (plan.relist) this.resourceVersion = undefined;
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
          : this.phase === 'watch'
            ? 'resuming'
            : 'retrying';
      this.log.warn(
        `${this.phase} of ${this.description} failed (attempt ${attempt}); ${how} in ${retryInMs} ms${plan.asAsked && retryInMs > 0 ? ' as the server asked' : ''}${outage ? ' or once the API server is ready' : ''}: ${error.message}`,
      );
      this.options.onError?.(error, { phase: this.phase, watch: this.description, attempt, retryInMs });
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
