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
