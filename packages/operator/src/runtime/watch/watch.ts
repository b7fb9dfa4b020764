import type { Observable } from 'rxjs';
import * as rx from '../rx.js';
import type { KubeObject, ResourceDescriptor } from '@nestor/core';
import { ListWatcher } from './list-watcher.js';
import type { WatchEvent } from './watch-event.js';
import type { WatchOptions, WatchTransport } from './watch-options.js';

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
  return new rx.Observable<WatchEvent<T & KubeObject>>((subscriber) =>
    watchInto(transport, resource as ResourceDescriptor<T & KubeObject>, options, new Map(), (event) =>
      subscriber.next(event),
    ),
  );
}

/**
 * The same list+watch kept in `store` (key to the last object emitted under it), which the
 * caller reads and never writes; `emit` gets each event with its key and the object it
 * replaces or deletes, and `onProgress` each time its resourceVersion (`options.stats`)
 * moves, bookmarks included. The Informer's way: one map and one key per cached object.
 * Returns what stops it.
 */
export function watchInto<T extends KubeObject>(
  transport: WatchTransport,
  resource: ResourceDescriptor<T>,
  options: WatchOptions,
  store: Map<string, T>,
  emit: (event: WatchEvent<T>, key?: string, old?: T) => void,
  onProgress?: () => void,
): () => void {
  const abort = new AbortController();
  void new ListWatcher<T>(transport, resource, options, emit, abort.signal, store, onProgress).run();
  return () => abort.abort(new Error('the watch was unsubscribed'));
}
