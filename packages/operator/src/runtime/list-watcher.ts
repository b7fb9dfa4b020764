import {
  apiVersionOf,
  DEFAULT_HTTP2_MIN_WATCH_TIMEOUT_SECONDS,
  DEFAULT_MIN_WATCH_TIMEOUT_SECONDS,
  isUnreachable,
  DEFAULT_WATCH_STALL_MS,
  type Clock,
  type Connectivity,
  KubeApiError,
  retryAfterMs as serverRetryAfterMs,
  listPages,
  ObjectTooDeepError,
  METADATA_LIST_ACCEPT,
  METADATA_WATCH_ACCEPT,
  type KubeObject,
  type KubeStatus,
  type ObjectRef,
  type Query,
  type ResourceDescriptor,
  isBuiltInKind,
  resourceName,
  resourcePath,
  type RuntimeLogger,
  silentLogger,
  systemClock,
  withoutManagedFields,
} from '@nestor/core';
import { Backoff } from './backoff.js';
import { KnownObjects, type RelistPass } from './known-objects.js';
import { StringPool } from './string-pool.js';
import type { WatchEvent } from './watch-event.js';
import type { WatchOptions, WatchTransport } from './watch-options.js';
import { createWatchStats, type WatchStats } from './watch-stats.js';

interface RawWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject;
  /** The protobuf decoder refused the object (too deep): `object` is its metadata only. */
  refused?: ObjectTooDeepError;
}

/**
 * An answer that calls for a retry at once (410 Gone, "too large" with no resourceVersion to
 * wait for, an etcd hiccup on a working watch) within this long of the previous one of its
 * kind waits its backoff: an isolated one goes at once, a loop does not.
 */
const AT_ONCE_GAP_MS = 10_000;

/** A list+watch healthy this long since its last retry began starts its backoff again from the first delay. */
export const WATCH_BACKOFF_RESET_MS = 30_000;

/**
 * Answers that said when to come back (Retry-After, a Status's retryAfterSeconds) retried then,
 * not on the backoff, with no event between: client-go's request retries take as many.
 */
export const MAX_RETRIES_AS_ASKED = 10;

/** How long past its timeout a watch may take to be ended by the server on a loaded machine. */
const WATCH_END_MARGIN_MS = 10_000;

/** The watch stream went quiet for too long (a half-open connection): reconnect. */
export class WatchStalledError extends Error {
  override readonly name = 'WatchStalledError';
}

/**
 * How some servers say "too old resourceVersion" without 410: etcd's own compaction error
 * passed through as a 500 (an etcd3 watcher that did not translate it), or the watch cache's
 * message under another code. The resourceVersion is gone either way: relist.
 */
const COMPACTED = /too old resource version|required revision has been compacted/i;
/** The API server is behind the resourceVersion asked for (its watch cache, or a restored etcd). */
const TOO_LARGE = /too large resource version/i;

/** The annotation of the bookmark that ends a stream's initial events (KEP-3157). */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * A request sent while the API server did not answer was still pending when the outage gate
 * found the server ready: abandoned, and sent again at once. A kube-apiserver that is still
 * starting accepts connections and holds their requests; a LIST of a custom resource held so
 * came back 4 s after the server's /readyz said 200, when one sent after it came back at once.
 */
class SentDuringOutage extends Error {
  override readonly name = 'SentDuringOutage';
}

/** A streamed sync did not deliver the state: a LIST does, this once or (`lasting`) always. */
class NoInitialEvents extends Error {
  constructor(
    message: string,
    readonly lasting: boolean,
  ) {
    super(message);
  }
}

/**
 * The list+watch loop behind watch(): one per subscription. Runs until `signal` aborts;
 * every failure is reported and retried, none ends it.
 */
export class ListWatcher<T extends KubeObject> {
  private readonly path: string;
  private readonly selectors: Query;
  private readonly description: string;
  private readonly apiVersion: string;
  private readonly known: KnownObjects<T>;
  /** The repeated short strings of the objects, one copy each (with 100,000 objects, megabytes). */
  private readonly strings = new StringPool();
  /** The last namespace keyed, and its "namespace/" (see keyOf). */
  private keyNamespace?: string;
  private keyPrefix = '';
  private readonly backoff: Backoff;
  private readonly stats: WatchStats;
  private readonly log: RuntimeLogger;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly strip: boolean;
  /** A built-in kind, listed and watched in protobuf when the transport allows it. */
  private readonly protobuf: boolean;
  private readonly metadataOnly: boolean;
  /** Where the next WATCH starts; undefined means a full sync (stream or LIST) first. */
  private resourceVersion?: string;
  private phase: 'list' | 'watch' = 'list';
  /** Complete syncs (streamed or listed) and WATCH requests so far, for stats. */
  private syncs = 0;
  private watches = 0;
  /** Syncs are streamed (when asked) until the server shows it cannot. */
  private streaming: boolean;
  /** The next sync is a LIST, once: the last stream ended early. */
  private listOnce = false;
  /**
   * When each kind of answer that goes at once last came (clock ms): a 410 Gone, a "too
   * large resourceVersion" that sent the watch to a consistent read, a served watch's
   * InternalError. See AT_ONCE_GAP_MS.
   */
  private readonly lastAtOnce = new Map<'gone' | 'tooLarge' | 'internal', number>();
  /** The error the stream itself carried (an ERROR event): the watch had been served. */
  private brokeBy?: Error;
  /**
   * A LIST that failed after some of its pages: the next attempt asks for the page after
   * them with the same continue token, into the same pass, instead of starting over.
   */
  private resumeList?: { pass: RelistPass<T>; continueToken: string; resourceVersion: string };
  /** The resourceVersion the last ERROR event (or unreadable event) came at. */
  private brokenAt?: string;
  /** The stream broke twice at one resourceVersion: the next sync is a relist, not a resume. */
  private relistNext = false;
  /**
   * The next relist's floor: the resourceVersion its watch ended at (410 Gone, "too old",
   * or broken twice there). The LIST asks for a state not older than it, which the API
   * server serves from its watch cache, as client-go's reflector relists after a watch
   * error, where a consistent read would read every object from etcd again; it cannot go
   * back in time. Used once. A consistent read when the server said it is behind that
   * resourceVersion ("too large"), or when a LIST was what failed.
   */
  private relistFrom?: string;
  /** Failures retried when the server asked (not on the backoff) since the last event. */
  private retriedAsAsked = 0;

  /**
   * `emit` gets each event with its object's key and the object it replaces or deletes (the
   * last one emitted under that key). `store` holds what was emitted, by key: an informer
   * passes its own and reads it, never writes it.
   */
  constructor(
    private readonly transport: WatchTransport,
    private readonly resource: ResourceDescriptor<T>,
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
    this.apiVersion = apiVersionOf(resource);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    // A watch that worked for 30 s since its last retry began retries quickly again: with
    // client-go's 2 min, a fault a minute after another waited up to 60 s (measured).
    this.backoff = new Backoff({
      clock: this.clock,
      random: this.random,
      resetAfterMs: WATCH_BACKOFF_RESET_MS,
      ...options.backoff,
    });
    this.stats = options.stats ?? createWatchStats();
    this.log = options.logger ?? silentLogger;
    this.strip = options.stripManagedFields ?? true;
    this.streaming = options.streamingList ?? false;
    this.metadataOnly = options.metadataOnly ?? false;
    this.protobuf = !this.metadataOnly && isBuiltInKind(this.apiVersion, resource.kind);
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
          this.fallBack(error);
          continue;
        }
        if (error instanceof SentDuringOutage) {
          this.log.info(`${this.phase} of ${this.description}: ${error.message}`);
          this.backoff.reset();
          continue;
        }
        await this.recover(error);
      }
    }
  }

  /** Whether the next sync is streamed (WatchList) rather than listed; consumes a one-off fallback. */
  private streamNext(): boolean {
    const listOnce = this.listOnce;
    this.listOnce = false;
    const stream = this.streaming && !listOnce;
    if (stream) this.resumeList = undefined;
    return stream;
  }

  /** The server did not stream the state: LIST now, and from now on if it never will. */
  private fallBack(error: NoInitialEvents): void {
    this.listOnce = true;
    if (error.lasting) {
      this.streaming = false;
      this.stats.streamingUnsupported = true;
      this.log.info(`${error.message}; listing ${this.description} in pages from now on`);
    } else {
      this.log.info(`${error.message}; listing ${this.description} in pages this time`);
    }
  }

  /** Starts a full sync: what it returns decides what changed and what vanished. */
  private beginSync(): RelistPass<T> {
    this.phase = 'list';
    return this.known.relist();
  }

  /** Records a listed or streamed object; emits it when it is new or changed. */
  private observe(pass: RelistPass<T>, raw: KubeObject): void {
    if (this.signal.aborted) return; // the store stays as it was when the watch stopped
    const key = this.keyOf(raw.metadata as ObjectRef);
    const object = this.decode(raw);
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
    const resume = this.resumeList;
    this.resumeList = undefined;
    let pass = resume ? resume.pass : this.beginSync();
    this.phase = 'list';
    let resourceVersion = resume?.resourceVersion ?? '';
    let continueToken = resume?.continueToken;
    const floor = resume ? undefined : this.relistFrom;
    this.relistFrom = undefined;
    let pagesRead = 0;
    // The first sync from the watch cache (as client-go's reflector), in one page, decoded
    // item by item as it arrives (protobuf or JSON). A relist must not go back in time: not
    // older than where its watch ended, or a consistent read.
    const fromCache = !resume && this.syncs === 0 && (this.options.firstListFromCache ?? true);
    const outage = this.outageScope();
    const pages = listPages<KubeObject>(this.transport, this.path, {
      query: fromCache
        ? { ...this.selectors, resourceVersion: '0' }
        : floor
          ? { ...this.selectors, resourceVersion: floor, resourceVersionMatch: 'NotOlderThan' }
          : this.selectors,
      pageSize: this.options.pageSize ?? 500,
      signal: outage.signal,
      ...(resume ? { continueFrom: resume.continueToken } : {}),
      // The continue token outlived etcd's compaction: the list starts again.
      onRestart: () => this.log.info(`list of ${this.description} expired between pages; listing again`),
      protobuf: this.protobuf,
      dropManagedFields: this.strip,
      ...(this.metadataOnly ? { accept: METADATA_LIST_ACCEPT } : {}),
    });
    try {
      for await (const page of pages) {
        outage.answered();
        if (page.restarted) pass = this.known.relist();
        for (const raw of page.items) {
          if (!raw.kind) {
            // List items come without apiVersion and kind; watch events carry them.
            raw.apiVersion = this.apiVersion;
            raw.kind = this.resource.kind;
          }
          this.observe(pass, raw);
        }
        for (const refused of page.refused) this.skipRefused(refused, pass);
        resourceVersion = page.resourceVersion ?? '';
        continueToken = page.continue;
        pagesRead++;
      }
    } catch (error) {
      // A page failed (a cut connection, a 5xx): its continue token is still good until
      // etcd compacts it, so the next attempt asks for that page, not for the whole list
      // again. Once: an attempt that resumed and got no page starts over, in case the token
      // is what fails.
      if (continueToken && pagesRead > 0 && !this.signal.aborted) {
        this.resumeList = { pass, continueToken, resourceVersion };
      }
      throw outage.reason() ?? error;
    } finally {
      outage.answered();
    }
    this.endSync(pass, resourceVersion, 'list');
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
    // The server ends the watch at timeoutSeconds, and sends a bookmark about every minute
    // before that: silence past the earlier of the two (plus a margin) is a dead connection.
    const stallMs =
      this.options.stallTimeoutMs ?? Math.min(DEFAULT_WATCH_STALL_MS, timeoutSeconds * 1000 + WATCH_END_MARGIN_MS);
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
        ...(pass
          ? { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' }
          : { resourceVersion: this.resourceVersion }),
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
      // The API server refuses sendInitialEvents (422 Invalid) when its WatchList feature is off.
      if (pass && error instanceof KubeApiError && error.status === 422) {
        if (--this.watches > 0) this.stats.restarts--; // refused: no watch was opened
        throw new NoInitialEvents(`the API server does not stream ${this.description} (${error.message})`, true);
      }
      throw error;
    } finally {
      outage.answered();
      watchdog.stop();
      this.signal.removeEventListener('abort', forward);
    }
    if (pass) {
      throw new NoInitialEvents(`the stream of ${this.description} ended before its initial events did`, false);
    }
    // As client-go: a stream that ends at once with nothing in it is a failure, not a loop.
    if (received === 0 && this.clock.now() - startedAt < 1000) {
      throw new Error('very short watch: the API server ended it at once without an event');
    }
    this.log.debug(`watch of ${this.description} ended after ${received} event(s); resuming`);
  }

  /** An event of a streamed sync; true for the bookmark that ends the initial events. */
  private initialEvent(pass: RelistPass<T>, event: RawWatchEvent): boolean {
    const raw = event.object;
    switch (event.type) {
      case 'ADDED':
        this.observe(pass, raw);
        this.stats.lastEventAt = this.clock.now();
        return false;
      case 'BOOKMARK':
        // Any other bookmark, or a MODIFIED or DELETED event, this early means the server
        // ignored sendInitialEvents (it predates WatchList) and watches as it always did.
        if (raw.metadata?.annotations?.[INITIAL_EVENTS_END] !== 'true') break;
        this.stats.bookmarks++;
        this.stats.lastEventAt = this.clock.now();
        this.endSync(pass, raw.metadata.resourceVersion ?? '', 'stream');
        return true;
      case 'ERROR':
        throw this.broken(this.errorOf(raw));
      default:
    }
    throw new NoInitialEvents(
      `the API server answered the stream of ${this.description} with ${event.type} before the end of its initial events`,
      true,
    );
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
        const key = this.keyOf(raw.metadata as ObjectRef);
        const resourceVersion = raw.metadata?.resourceVersion;
        const object = this.decode(raw);
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
        throw this.broken(this.errorOf(raw));
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
    const key = this.keyOf(event.object.metadata as ObjectRef);
    const known = this.known.delete(key);
    if (known) this.emit({ type: 'DELETED', object: known }, key, known);
  }

  /** Logs a refused object; a list or stream sync keeps it as it was known, not as vanished. */
  private skipRefused(error: ObjectTooDeepError, pass?: RelistPass<T>): void {
    this.stats.refused = (this.stats.refused ?? 0) + 1;
    this.log.error(
      `${this.phase} of ${this.description}: ${error.message}. Skipped: the watch goes on, the cache keeps the last version it decoded, if any`,
    );
    if (pass && error.object.metadata?.name) pass.keep(this.keyOf(error.object.metadata as ObjectRef));
  }

  /**
   * The Status of an ERROR event as the error it stands for. An object that is no Status (a
   * proxy's or a broken server's) is a 500 saying so, never a crash of the loop.
   */
  private errorOf(raw: unknown): KubeApiError {
    const request = { method: 'GET', path: this.path, watch: true };
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      const status = raw as KubeStatus;
      if (status.kind === 'Status' || typeof status.code === 'number' || typeof status.message === 'string') {
        const code = typeof status.code === 'number' && status.code >= 400 ? status.code : 500;
        return KubeApiError.fromResponse(request, code, status);
      }
    }
    const what = raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw;
    return KubeApiError.fromResponse(request, 500, `an ERROR event whose object is not a Status (${what})`);
  }

  /**
   * The stream broke (an ERROR event, an unreadable event): the next watch resumes from the
   * last resourceVersion, which is what most such errors call for (an etcd hiccup, a
   * conversion webhook away). A second break at the same resourceVersion, with nothing
   * received between, relists instead, as client-go relists on any: what fails may be the
   * resourceVersion itself (compacted but not said with 410, ahead of a restored etcd).
   */
  private broken(error: Error): Error {
    const at = this.resourceVersion;
    if (at !== undefined && at === this.brokenAt) this.relistNext = true;
    this.brokenAt = at;
    this.brokeBy = error;
    return error;
  }

  private advance(resourceVersion: string | undefined): void {
    if (resourceVersion) this.resourceVersion = this.stats.resourceVersion = resourceVersion;
    this.retriedAsAsked = 0;
    this.stats.lastEventAt = this.clock.now();
  }

  /**
   * keyOf's `namespace/name`, built on one shared "namespace/" per namespace in a row: the
   * key then costs its own 32 bytes, not 32 more for a copy of that prefix.
   */
  private keyOf(ref: ObjectRef): string {
    const namespace = ref.namespace;
    if (!namespace) return ref.name;
    if (namespace !== this.keyNamespace) {
      this.keyNamespace = namespace;
      this.keyPrefix = `${namespace}/`;
    }
    return this.keyPrefix + ref.name;
  }

  private decode(raw: KubeObject): T {
    // Nothing else references a freshly parsed object: changing it in place is free.
    if (this.strip && raw.metadata?.managedFields) raw.metadata = withoutManagedFields(raw.metadata);
    if (this.metadataOnly) {
      // PartialObjectMetadata (meta.k8s.io/v1) stands for an object of this kind.
      raw.apiVersion = this.apiVersion;
      raw.kind = this.resource.kind;
    } else {
      // The watch's own copies, not one per event.
      if (raw.apiVersion === this.apiVersion) raw.apiVersion = this.apiVersion;
      if (raw.kind === this.resource.kind) raw.kind = this.resource.kind;
    }
    this.strings.internMetadata(raw);
    return (this.options.transform ? this.options.transform(raw) : raw) as T;
  }

  private async recover(thrown: unknown): Promise<void> {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    const gone = error instanceof KubeApiError && (error.isGone || COMPACTED.test(error.detail));
    const relist = this.relistNext && !gone;
    this.relistNext = false;
    const inStream = error === this.brokeBy;
    this.brokeBy = undefined;
    // A watch that ended relists from where it was (for a relist, where it broke twice).
    const tooLarge = error instanceof KubeApiError && TOO_LARGE.test(error.detail);
    this.relistFrom = (gone || relist) && this.phase === 'watch' && !tooLarge ? this.resourceVersion : undefined;
    if (gone || relist) {
      this.resourceVersion = undefined;
      this.brokenAt = undefined;
    }
    const attempt = ++this.stats.failures;
    const connectivity = this.transport.connectivity;
    // No response, or an answer while the server is not ready again (403 before its RBAC
    // has synced, 503): the outage's failure, not this watch's. It retries when the outage
    // gate's probe (every second) finds the server ready, and its backoff starts afresh then.
    const outage = connectivity !== undefined && (isUnreachable(error) || connectivity.inOutage);
    // Never sooner than the server asked (429 from API Priority and Fairness, 5xx with
    // Retry-After, a watch's "too large resourceVersion" with retryAfterSeconds). Nor later:
    // an answer that says when is retried then, and does not grow the backoff, which is for
    // failures that say nothing (past ten such answers with no event between, it counts again).
    const retryAfterMs = serverRetryAfterMs(error) ?? 0;
    const asAsked = retryAfterMs > 0 && this.retriedAsAsked < MAX_RETRIES_AS_ASKED;
    if (asAsked) this.retriedAsAsked++;
    // 410 Gone needs a LIST and nothing else: at once, unless the last one was recent (a loop).
    const now = this.clock.now();
    const relistNow = this.isolated('gone', gone, now) && retryAfterMs === 0;
    // "Too large resourceVersion" asks for a wait until the server has caught up with that
    // resourceVersion; a consistent read asks for none, so it goes at once (client-go's
    // reflector too), unless the last one was recent.
    const consistentRead = tooLarge && this.resourceVersion === undefined;
    const consistentNow = this.isolated('tooLarge', consistentRead, now) && this.resumeList === undefined;
    // A served watch ended by the API server's InternalError ("etcdserver: no leader": etcd
    // electing, usually over within a second) resumes at once, as the API server's own watch
    // cache retries its etcd watch (client-go's MaxInternalErrorRetryDuration, 30 s there);
    // once, and the backoff if it comes again. A 500 answering the request itself, or an ERROR
    // whose object is no Status (a proxy's, not the server's word), waits the backoff.
    const hiccup =
      inStream && !gone && !relist && error instanceof KubeApiError && error.statusObject?.reason === 'InternalError';
    const resumeNow = this.isolated('internal', hiccup, now) && retryAfterMs === 0;
    const retryInMs =
      relistNow || consistentNow || resumeNow
        ? 0
        : asAsked
          ? retryAfterMs
          : Math.max(this.backoff.next(), retryAfterMs);
    this.stats.lastError = error.message;
    if (gone) {
      // Routine (etcd compacts history): relist, and emit what changed meanwhile.
      this.log.info(`watch of ${this.description}: resourceVersion expired; listing again in ${retryInMs} ms`);
    } else {
      const how = relist
        ? 'listing again'
        : this.resumeList
          ? 'resuming at the page that failed'
          : this.phase === 'watch'
            ? 'resuming'
            : 'retrying';
      this.log.warn(
        `${this.phase} of ${this.description} failed (attempt ${attempt}); ${how} in ${retryInMs} ms${asAsked && retryInMs > 0 ? ' as the server asked' : ''}${outage ? ' or once the API server is ready' : ''}: ${error.message}`,
      );
      this.options.onError?.(error, { phase: this.phase, watch: this.description, attempt, retryInMs });
    }
    if (retryInMs === 0) return;
    if ((await this.sleep(retryInMs, outage ? connectivity : undefined)) === 'ready') this.backoff.reset();
  }

  /**
   * Whether an answer of `kind` that `came` now is the first of its kind for AT_ONCE_GAP_MS,
   * and so may be retried at once; notes it either way.
   */
  private isolated(kind: 'gone' | 'tooLarge' | 'internal', came: boolean, now: number): boolean {
    if (!came) return false;
    const last = this.lastAtOnce.get(kind) ?? -Infinity;
    this.lastAtOnce.set(kind, now);
    return now - last > AT_ONCE_GAP_MS;
  }

  /**
   * For a request about to be sent: during an outage (the transport saw no response and the
   * outage gate has not found the server ready since), a signal that aborts it when the gate
   * does, unless its answer began first (`answered()`); `reason()` then says to send it
   * again. Outside an outage, the watch's own signal. `into`: abort that controller instead.
   */
  private outageScope(into?: AbortController): {
    signal: AbortSignal;
    answered: () => void;
    reason: () => SentDuringOutage | undefined;
  } {
    const connectivity = this.transport.connectivity;
    const signal = into?.signal ?? this.signal;
    if (!connectivity?.inOutage) return { signal, answered: () => {}, reason: () => undefined };
    const abort = into ?? new AbortController();
    const done = new AbortController();
    let resend: SentDuringOutage | undefined;
    void connectivity.whenReady(AbortSignal.any([done.signal, this.signal])).then(() => {
      if (done.signal.aborted || this.signal.aborted) return;
      resend = new SentDuringOutage(
        'sent while the API server did not answer and still pending now that it is ready; sending it again',
      );
      abort.abort(resend);
    });
    return {
      signal: into ? into.signal : AbortSignal.any([this.signal, abort.signal]),
      answered: () => done.abort(),
      reason: () => resend,
    };
  }

  /** Waits `ms`, or less when `connectivity` reports the server ready first ('ready' then). */
  private sleep(ms: number, connectivity?: Pick<Connectivity, 'whenReady'>): Promise<'slept' | 'ready'> {
    return new Promise((resolve) => {
      const woken = new AbortController();
      const done = (how: 'slept' | 'ready') => {
        this.clock.clearTimeout(handle);
        woken.abort();
        this.signal.removeEventListener('abort', aborted);
        resolve(how);
      };
      const aborted = () => done('slept');
      const handle = this.clock.setTimeout(aborted, ms);
      this.signal.addEventListener('abort', aborted, { once: true });
      if (connectivity) {
        void connectivity.whenReady(AbortSignal.any([woken.signal, this.signal])).then(() => {
          if (!woken.signal.aborted) done('ready');
        });
      }
    });
  }
}

/**
 * Fires when nothing has arrived for `limitMs`. One timer per stream, re-armed only when it
 * fires early, so an event costs one clock read, not a timer reset.
 */
class Watchdog {
  private lastAt: number;
  private handle: unknown;

  constructor(
    private readonly clock: Clock,
    private readonly limitMs: number,
    private readonly onStall: () => void,
  ) {
    this.lastAt = clock.now();
    this.arm(limitMs);
  }

  touch(): void {
    this.lastAt = this.clock.now();
  }

  stop(): void {
    this.clock.clearTimeout(this.handle);
  }

  private arm(ms: number): void {
    this.handle = this.clock.setTimeout(() => {
      const quietMs = this.clock.now() - this.lastAt;
      if (quietMs >= this.limitMs) this.onStall();
      else this.arm(this.limitMs - quietMs);
    }, ms);
  }
}
