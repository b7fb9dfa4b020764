import { KubeApiError, type RuntimeLogger } from '@nestor/core';
import type { RawWatchEvent } from './watch-decoder.js';
import type { WatchStats } from './watch-stats.js';

/** The annotation of the bookmark that ends a stream's initial events (KEP-3157). */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** The query of a WATCH that streams the state before it watches. */
export const INITIAL_EVENTS_QUERY = { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' } as const;

/** A streamed sync did not deliver the state: a LIST does, this once or (`lasting`) always. */
export class NoInitialEvents extends Error {
  constructor(
    message: string,
    readonly lasting: boolean,
  ) {
    super(message);
  }
}

/**
 * Streamed syncs (WatchList, KEP-3157): a WATCH with sendInitialEvents, whose server sends
 * the current state as ADDED events, then a bookmark marking their end, and goes on as an
 * ordinary watch. Used while asked for and until the server shows it cannot.
 */
export class StreamedSync {
  /** The next sync is a LIST, once: the last stream ended early. */
  private listOnce = false;

  constructor(
    private enabled: boolean,
    private readonly description: string,
    private readonly stats: WatchStats,
    private readonly log: RuntimeLogger,
  ) {}

  /** Whether the next sync is streamed rather than listed; consumes a one-off fallback. */
  next(): boolean {
    const listOnce = this.listOnce;
    this.listOnce = false;
    return this.enabled && !listOnce;
  }

  /** The server did not stream the state: LIST now, and from now on if it never will. */
  fallBack(error: NoInitialEvents): void {
    this.listOnce = true;
    if (error.lasting) {
      this.enabled = false;
      this.stats.streamingUnsupported = true;
      this.log.info(`${error.message}; listing ${this.description} in pages from now on`);
    } else {
      this.log.info(`${error.message}; listing ${this.description} in pages this time`);
    }
  }

  /**
   * What an event before the end of the initial events is: an object of the state, their
   * end, or an error; anything else means the server ignored sendInitialEvents (it predates
   * WatchList) and watches as it always did: NoInitialEvents is thrown.
   */
  initialEvent(event: RawWatchEvent): 'object' | 'end' | 'error' {
    switch (event.type) {
      case 'ADDED':
        return 'object';
      case 'BOOKMARK':
        // Any other bookmark, or a MODIFIED or DELETED event, this early: see above.
        if (event.object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') return 'end';
        break;
      case 'ERROR':
        return 'error';
      default:
    }
    throw new NoInitialEvents(
      `the API server answered the stream of ${this.description} with ${event.type} before the end of its initial events`,
      true,
    );
  }

  /** The API server refuses sendInitialEvents (422 Invalid) when its WatchList feature is off. */
  refusal(error: unknown): NoInitialEvents | undefined {
    if (!(error instanceof KubeApiError) || error.status !== 422) return undefined;
    return new NoInitialEvents(`the API server does not stream ${this.description} (${error.message})`, true);
  }

  /** The stream ended before its initial events did: a LIST this once. */
  endedEarly(): NoInitialEvents {
    return new NoInitialEvents(`the stream of ${this.description} ended before its initial events did`, false);
  }
}
