import type { Clock, KubeObject, ObjectRef, ObjectTooDeepError, RuntimeLogger } from '@nestor/core';
import type { KnownObjects, RelistPass } from './known-objects.js';
import type { RelistPolicy } from './relist-policy.js';
import type { StreamedSync } from './streamed-sync.js';
import type { RawWatchEvent, WatchDecoder } from './watch-decoder.js';
import type { WatchEvent } from './watch-event.js';
import type { WatchStats } from './watch-stats.js';

export interface WatchedObjectsContext<T extends KubeObject> {
  known: KnownObjects<T>;
  decoder: WatchDecoder<T>;
  /** Told of breaks in the stream, and of events (progress). */
  policy: Pick<RelistPolicy, 'broke' | 'progressed'>;
  streamed: Pick<StreamedSync, 'initialEvent'>;
  emit: (event: WatchEvent<T>, key?: string, old?: T) => void;
  /** The watch's: once it aborts, the store stays as it was when the watch stopped. */
  signal: AbortSignal;
  stats: WatchStats;
  log: RuntimeLogger;
  clock: Clock;
  /** 'deployments.apps' and the selector, for messages. */
  description: string;
  /** Told each time the resourceVersion moves (an event, a bookmark, a sync), after the store has it. */
  onProgress?: () => void;
  /** The first sync stores every object it gets, unchanged ones included (WatchOptions.replaceKept). */
  replaceKept?: boolean;
}

/**
 * The objects a list+watch follows, and where it stands: applies what its syncs (listed or
 * streamed) and watch events bring, and emits each change.
 */
export class WatchedObjects<T extends KubeObject> {
  /** Where the next WATCH starts; undefined means a full sync (stream or LIST) first. */
  resourceVersion?: string;
  phase: 'list' | 'watch' = 'list';
  /** Complete syncs (streamed or listed) so far. */
  syncs = 0;

  constructor(private readonly context: WatchedObjectsContext<T>) {}

  /** Starts a full sync: what it returns decides what changed and what vanished. */
  beginSync(): RelistPass<T> {
    this.phase = 'list';
    return this.context.known.relist(this.syncs === 0 && this.context.replaceKept === true);
  }

  /** Records a listed or streamed object; emits it when it is new or changed. */
  observe(pass: RelistPass<T>, raw: KubeObject): void {
    const { decoder, emit, signal } = this.context;
    if (signal.aborted) return; // the store stays as it was when the watch stopped
    const key = decoder.keyOf(raw.metadata as ObjectRef);
    const object = decoder.decode(raw);
    const type = pass.observe(key, object, decoder.kept(object));
    if (type) emit({ type, object }, key, pass.replaced);
  }

  /** Ends a full sync: what it did not return is deleted, and the watch resumes from its resourceVersion. */
  endSync(pass: RelistPass<T>, resourceVersion: string, by: 'list' | 'stream'): void {
    const { emit, signal, stats } = this.context;
    if (signal.aborted) return;
    for (const [key, object] of pass.vanished()) emit({ type: 'DELETED', object }, key, object);
    if (this.syncs++ > 0) stats.relists++;
    this.resourceVersion = resourceVersion;
    stats.resourceVersion = resourceVersion;
    stats.lastSyncAt = this.context.clock.now();
    stats.lastSyncBy = by;
    stats.failures = 0;
    this.context.onProgress?.();
    emit({ type: 'SYNCED' });
  }

  /** An event of a streamed sync; true for the bookmark that ends the initial events. */
  initialEvent(pass: RelistPass<T>, event: RawWatchEvent): boolean {
    const { stats, clock } = this.context;
    const raw = event.object;
    switch (this.context.streamed.initialEvent(event)) {
      case 'object':
        this.observe(pass, raw);
        stats.lastEventAt = clock.now();
        return false;
      case 'end':
        stats.bookmarks++;
        stats.lastEventAt = clock.now();
        this.endSync(pass, raw.metadata?.resourceVersion ?? '', 'stream');
        return true;
      case 'error':
        throw this.broken(this.context.decoder.errorOf(raw));
    }
  }

  /** An event of a watch past its sync. */
  handle(event: RawWatchEvent): void {
    const { decoder, known, emit, signal, stats, description } = this.context;
    const raw = event.object;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED': {
        if (typeof raw?.metadata?.name !== 'string') {
          throw this.broken(new Error(`watch of ${description}: ${event.type} event without an object's name`));
        }
        if (signal.aborted) return;
        const key = decoder.keyOf(raw.metadata as ObjectRef);
        const resourceVersion = raw.metadata?.resourceVersion;
        const object = decoder.decode(raw);
        const old = event.type === 'DELETED' ? known.delete(key) : known.set(key, decoder.kept(object));
        this.advance(resourceVersion);
        stats.events++;
        emit({ type: event.type, object }, key, old);
        return;
      }
      case 'BOOKMARK':
        this.advance(raw.metadata?.resourceVersion);
        stats.bookmarks++;
        return;
      case 'ERROR':
        throw this.broken(decoder.errorOf(raw));
      default:
        this.context.log.warn(`watch of ${description}: ignoring an event of unknown type ${String(event.type)}`);
    }
  }

  /**
   * An event whose object the protobuf decoder refused (nested past MAX_OBJECT_DEPTH). The
   * API server stored it, so it never ends the watch: its metadata was read, so a deletion
   * applies and the watch moves past it; otherwise it is logged and skipped, and the cache
   * keeps the last version it could decode. (Not read again as JSON: a handler's recursive
   * code, JSON.stringify included, overflows the stack on such an object.)
   */
  handleRefused(event: RawWatchEvent, error: ObjectTooDeepError, pass?: RelistPass<T>): void {
    const { stats, clock } = this.context;
    if (pass) {
      if (event.type !== 'ADDED') return void this.initialEvent(pass, event);
      this.skipRefused(error, pass);
      stats.lastEventAt = clock.now();
      return;
    }
    this.advance(event.object.metadata?.resourceVersion);
    stats.events++;
    if (event.type !== 'DELETED' || !event.object.metadata?.name) return this.skipRefused(error);
    if (this.context.signal.aborted) return;
    const key = this.context.decoder.keyOf(event.object.metadata as ObjectRef);
    const known = this.context.known.delete(key);
    if (known) this.context.emit({ type: 'DELETED', object: known }, key, known);
  }

  /** Logs a refused object; a list or stream sync keeps it as it was known, not as vanished. */
  skipRefused(error: ObjectTooDeepError, pass?: RelistPass<T>): void {
    const { stats, log, description, decoder } = this.context;
    stats.refused = (stats.refused ?? 0) + 1;
    log.error(
      `${this.phase} of ${description}: ${error.message}. Skipped: the watch goes on, the cache keeps the last version it decoded, if any`,
    );
    if (pass && error.object.metadata?.name) pass.keep(decoder.keyOf(error.object.metadata as ObjectRef));
  }

  /** The stream broke (an ERROR event, an unreadable event): the policy decides how to go on. */
  private broken(error: Error): Error {
    this.context.policy.broke(error, this.resourceVersion);
    return error;
  }

  private advance(resourceVersion: string | undefined): void {
    const { stats } = this.context;
    if (resourceVersion) this.resourceVersion = stats.resourceVersion = resourceVersion;
    this.context.onProgress?.();
    this.context.policy.progressed();
    stats.lastEventAt = this.context.clock.now();
  }
}
