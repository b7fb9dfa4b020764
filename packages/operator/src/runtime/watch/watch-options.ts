import type { Clock, KubeObject, RuntimeLogger, Transport } from '@nestor/core';
import type { ObjectSelector } from '../../client/object-selector.js';
import type { BackoffOptions } from '../backoff.js';
import type { WatchStats } from './watch-stats.js';

/** The part of the Transport a watch uses. */
export type WatchTransport = Pick<Transport, 'json' | 'stream'> &
  Partial<Pick<Transport, 'requestStreamed' | 'protobuf' | 'checksLiveness' | 'connectivity'>>;

export interface WatchErrorInfo {
  phase: 'list' | 'watch';
  /** 'deployments.apps' and the selector, for messages. */
  watch: string;
  /** Failures in a row so far, this one included. */
  attempt: number;
  /** When the next attempt starts. */
  retryInMs: number;
}

/** Which objects a watch follows (its selector), and how. */
export interface WatchOptions extends ObjectSelector {
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
   * The first LIST of a kind is served from the API server's watch cache (resourceVersion 0:
   * the state it holds, maybe a moment old; the watch that follows brings the rest), as
   * client-go's reflector lists (default true). It spares the server a consistent read page
   * by page: for 50,000 ConfigMaps 0.3-0.8 against 1.1-2.0 s of its CPU
   * (bench/micro/list-wire-format.mjs). The server answers it in one page, decoded item by
   * item as it arrives, protobuf or JSON (`JsonListDecoder`): the body is never held whole.
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
  /**
   * What the store keeps of each object, which is what later events give as the object an
   * update replaced and a resync's deletion gives as the object (default: the object itself,
   * as emitted). An informer that only maps events keeps a skeleton. It must keep metadata's
   * name, namespace and resourceVersion.
   * @internal
   */
  keep?: (object: KubeObject) => KubeObject;
  /**
   * The first sync stores every object the server sends, unchanged ones included, in place of
   * what the store kept (an informer that starts keeping whole objects where it kept
   * skeletons); it emits only the changes, as any sync.
   * @internal
   */
  replaceKept?: boolean;
  /** Delete metadata.managedFields from each decoded object (default true: memory). */
  stripManagedFields?: boolean;
  logger?: RuntimeLogger;
  /** Called on every failure the watch recovers from (it always does). */
  onError?: (error: Error, info: WatchErrorInfo) => void;
  /** Updated in place as the watch runs. */
  stats?: WatchStats;
  /**
   * Delays between attempts: 0.8 s doubling to 30 s with up to 100 % jitter, as client-go's
   * reflector, started over once the watch has worked for 30 s since its last retry began
   * (WATCH_BACKOFF_RESET_MS; client-go: 2 min).
   */
  backoff?: BackoffOptions;
  /**
   * Server-side watch timeout is random in [min, 2·min) seconds. Default: 300 (client-go's
   * reflector) over HTTP/2, whose PING finds a dead connection (DEFAULT_HTTP2_MIN_WATCH_TIMEOUT_SECONDS);
   * 25 over HTTP/1.1, where the watch's end is what finds it (DEFAULT_MIN_WATCH_TIMEOUT_SECONDS).
   */
  minWatchTimeoutSeconds?: number;
  /** Reconnect a watch that received nothing, bookmarks included, for this long (default: its timeout + 10 s, at most 70 s). */
  stallTimeoutMs?: number;
  clock?: Clock;
  random?: () => number;
}
