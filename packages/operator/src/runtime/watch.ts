import { Observable } from 'rxjs';
import type { Transport, Clock, KubeObject, RuntimeLogger, ResourceDescriptor } from '@nestor/core';
import type { BackoffOptions } from './backoff.js';
import { ListWatcher } from './list-watcher.js';

/** A change of one object, or SYNCED once a complete (re)list has been emitted. */
export type WatchEvent<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T } | { type: 'SYNCED' };

/** The part of the Transport a watch uses. */
export type WatchTransport = Pick<Transport, 'json' | 'stream'> &
  Partial<Pick<Transport, 'requestStreamed' | 'protobuf'>>;

/** Health of one watch; the caller passes the object in and reads it (metrics, health checks). */
export interface WatchStats {
  /** WATCH requests opened after the first. */
  restarts: number;
  /** Complete syncs (streamed or listed) after the first one (410 Gone). */
  relists: number;
  /** Object events received (bookmarks not included). */
  events: number;
  bookmarks: number;
  /**
   * Objects the protobuf decoder refused (nested past MAX_OBJECT_DEPTH), each logged as an
   * error naming it and skipped: the watch and its resourceVersion go on.
   */
  refused?: number;
  /** Failures in a row, 0 once a list or watch succeeds. */
  failures: number;
  /** Clock time of the last event or bookmark. */
  lastEventAt?: number;
  /** Clock time of the last complete sync. */
  lastSyncAt?: number;
  /** How the last complete sync came: a watch stream of the state (WatchList) or a paginated LIST. */
  lastSyncBy?: 'stream' | 'list';
  /** The API server cannot stream the state: syncs are paginated LISTs from then on. */
  streamingUnsupported?: boolean;
  /** The resourceVersion the watch would resume from. */
  resourceVersion?: string;
  lastError?: string;
}

export function createWatchStats(): WatchStats {
  return { restarts: 0, relists: 0, events: 0, bookmarks: 0, failures: 0 };
}

export interface WatchErrorInfo {
  phase: 'list' | 'watch';
  /** 'deployments.apps' and the selector, for messages. */
  watch: string;
  /** Failures in a row so far, this one included. */
  attempt: number;
  /** When the next attempt starts. */
  retryInMs: number;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Fetch the state (first sync and resyncs after 410 Gone) as a watch stream with
   * sendInitialEvents (WatchList, KEP-3157), as client-go's reflector does, where the API
   * server offers it; paginated LISTs where it does not. Default false: with JSON, the
   * stream costs this process about 25 % more CPU and time than LIST pages of 500
   * (`bench/run.mjs` sync at 10k and 50k ConfigMaps); it spares the API server from
   * building whole LIST responses in memory.
   */
  streamingList?: boolean;
  /**
   * The first LIST of a kind read in protobuf (built-in kinds) is served from the API
   * server's watch cache (resourceVersion 0: the state it holds, maybe a moment old; the
   * watch that follows brings the rest), as client-go's reflector lists (default true). It
   * spares the server a consistent read page by page: for 50,000 ConfigMaps 0.3-0.8 against
   * 1.1-2.0 s of its CPU (bench/micro/list-wire-format.mjs). The server answers it in one
   * page, decoded item by item as it arrives. JSON lists (custom resources, or protobuf off)
   * stay in pages: a one-page JSON answer is held whole (+170 MB of RSS at 50,000 objects).
   * Relists after 410 Gone are consistent reads. False: every LIST is a consistent read.
   */
  firstListFromCache?: boolean;
  /**
   * Only the objects' metadata (PartialObjectMetadata over JSON), as client-go's metadata
   * informer: emitted objects carry the resource's apiVersion and kind, and metadata only.
   */
  metadataOnly?: boolean;
  /** Objects per LIST page (default 500). */
  pageSize?: number;
  /**
   * Applied once to each decoded object before it is emitted (e.g. to drop fields the
   * operator never reads). It may change the object in place; it must keep metadata's
   * name, namespace and resourceVersion.
   */
  transform?: (object: KubeObject) => KubeObject;
  /** Delete metadata.managedFields from each decoded object (default true: memory). */
  stripManagedFields?: boolean;
  logger?: RuntimeLogger;
  /** Called on every failure the watch recovers from (it always does). */
  onError?: (error: Error, info: WatchErrorInfo) => void;
  /** Updated in place as the watch runs. */
  stats?: WatchStats;
  backoff?: BackoffOptions;
  /** Server-side watch timeout is random in [min, 2·min) seconds (default 25: DEFAULT_MIN_WATCH_TIMEOUT_SECONDS; client-go's reflector: 300). */
  minWatchTimeoutSeconds?: number;
  /** Reconnect a watch that received nothing, bookmarks included, for this long (default: its timeout + 10 s, at most 70 s). */
  stallTimeoutMs?: number;
  clock?: Clock;
  random?: () => number;
}

/**
 * List-then-watch of one resource and selector as a cold Observable, the way client-go's
 * reflector runs it: a paginated LIST (or, with `streamingList`, the state as a watch
 * stream where the server offers it), then a WATCH with bookmarks from its resourceVersion, resumed from the
 * last resourceVersion seen after any failure, with a resync after 410 Gone that emits only
 * the differences (deletions included), then SYNCED.
 * It never errors or completes: failures go to `onError`, the logger and `stats`.
 * Unsubscribing aborts the request in flight.
 */
export function watch<T>(
  transport: WatchTransport,
  resource: ResourceDescriptor<T>,
  options: WatchOptions = {},
): Observable<WatchEvent<T & KubeObject>> {
  return new Observable<WatchEvent<T & KubeObject>>((subscriber) => {
    const abort = new AbortController();
    const listWatcher = new ListWatcher<T & KubeObject>(
      transport,
      resource as ResourceDescriptor<T & KubeObject>,
      options,
      (event) => subscriber.next(event),
      abort.signal,
    );
    void listWatcher.run();
    return () => abort.abort(new Error('the watch was unsubscribed'));
  });
}
