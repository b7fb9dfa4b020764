import { keyOf, systemClock, type Clock, type ObjectRef, type TimerHandle } from '@nestor/core';
import type { Observable } from 'rxjs';
import * as rx from '../rx.js';
import { Backoff } from '../backoff.js';
import { positiveDuration } from '../options-check.js';
import { toError } from './result.js';

// A source over an API outside Kubernetes that can only be listed (simple-controller-runtime's
// poller, kooper's ListerWatcher over a list): the poller lists, diffs by key against the last
// list, and emits the requests whose item appeared, changed or vanished. The reconciler then
// asks that API for the item's current state, so the queue's guarantees hold as for a kind.

/** What poll takes: the read, the condition it waits for, the interval and the timeout. */
export interface PollOptions<T> {
  /** Time from the start of one call to the start of the next (a slower call is followed at once). */
  intervalMs: number;
  /** The request an item stands for: an object reference, or a name (in `namespace`). */
  key: (item: T) => ObjectRef | string;
  /** The namespace of requests whose key is a name. */
  namespace?: string;
  /**
   * What makes an item changed: compared with `===` to the last poll's (default: its JSON,
   * which is right for plain data; return an ETag or a revision when the API has one).
   */
  version?: (item: T) => unknown;
  /**
   * After a failed call the next waits `intervalMs * 2^failures`, capped at this
   * (default: the interval's 32 times, at least 5 min), plus the jitter; a success polls at
   * the interval again.
   */
  maxBackoffMs?: number;
  /**
   * Up to this fraction of a backoff wait is added at random (default 0.2), so replicas
   * or pollers that failed together during an outage do not all call again at once.
   */
  jitter?: number;
  /** Source of randomness for the jitter (default `Math.random`; tests fix it). */
  random?: () => number;
  /** Told of each failed call and the wait before the next (polling goes on regardless). */
  onError?: (error: Error, retryInMs: number) => void;
  /** Stops polling (and completes the stream) when aborted: unsubscribing does too. */
  signal?: AbortSignal;
  clock?: Clock;
}

/**
 * Calls `list` every `intervalMs` and emits the requests of the items that appeared, changed
 * or vanished since the last call (every item on the first), as a @Source() returns them:
 *
 * ```ts
 * @Source()
 * records() {
 *   return poll((signal) => this.api.listRecords({ signal }), { intervalMs: 30_000, key: (r) => r.id });
 * }
 * ```
 *
 * Calls never overlap; each gets a signal that aborts when the stream ends. A failed call
 * (or a `key` that throws) is reported to `onError` and tried again with capped exponential
 * backoff, keeping the last good list, so a flaky API neither stops the poller nor makes it
 * report everything as changed.
 */
export function poll<T>(
  list: (signal: AbortSignal) => Promise<Iterable<T>> | Iterable<T>,
  options: PollOptions<T>,
): Observable<ObjectRef[]> {
  const intervalMs = positiveDuration(options.intervalMs, 'poll(): intervalMs');
  if (typeof options.key !== 'function')
    throw new TypeError('poll(): options.key must be a function from an item to its { namespace, name } or name');
  const maxBackoffMs = positiveDuration(
    options.maxBackoffMs ?? Math.max(intervalMs * 32, 300_000),
    'poll(): maxBackoffMs',
  );
  const jitter = options.jitter ?? 0.2;
  if (!(jitter >= 0 && jitter <= 1)) throw new RangeError(`poll(): jitter must be within [0, 1], not ${jitter}`);
  const clock = options.clock ?? systemClock;
  const version = options.version ?? ((item: T) => JSON.stringify(item));

  return new rx.Observable<ObjectRef[]>((subscriber) => {
    const abort = new AbortController();
    let timer: TimerHandle | undefined;
    let last = new Map<string, { ref: ObjectRef; version: unknown }>();
    // Doubling from twice the interval; only a success starts it over.
    const backoff = new Backoff({
      initialMs: Math.min(intervalMs * 2, maxBackoffMs),
      maxMs: maxBackoffMs,
      jitter,
      resetAfterMs: Number.MAX_SAFE_INTEGER,
      ...(options.random ? { random: options.random } : {}),
      clock,
    });

    const refOf = (item: T): ObjectRef => {
      const key = options.key(item);
      if (typeof key === 'string')
        return options.namespace ? { namespace: options.namespace, name: key } : { name: key };
      return key;
    };

    /** The requests to emit, and the new state; throws when `key` does. */
    const diff = (items: Iterable<T>) => {
      const seen = new Map<string, { ref: ObjectRef; version: unknown }>();
      const changed = new Map<string, ObjectRef>();
      for (const item of items) {
        const ref = refOf(item);
        const key = keyOf(ref);
        const entry = { ref, version: version(item) };
        seen.set(key, entry);
        if (last.get(key)?.version !== entry.version) changed.set(key, ref);
      }
      for (const [key, { ref }] of last) if (!seen.has(key)) changed.set(key, ref);
      return { seen, refs: [...changed.values()] };
    };

    const schedule = (ms: number) => {
      if (!abort.signal.aborted) timer = clock.setTimeout(() => void run(), ms);
    };

    const run = async () => {
      timer = undefined;
      const started = clock.now();
      try {
        const { seen, refs } = diff(await list(abort.signal));
        if (abort.signal.aborted) return;
        last = seen;
        backoff.reset();
        if (refs.length > 0) subscriber.next(refs);
        schedule(Math.max(0, started + intervalMs - clock.now()));
      } catch (error) {
        if (abort.signal.aborted) return;
        const retryInMs = backoff.next();
        options.onError?.(toError(error), retryInMs);
        schedule(retryInMs);
      }
    };

    const stop = () => {
      abort.abort(new Error('the poller stopped'));
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    };
    const ended = () => {
      stop();
      subscriber.complete();
    };
    if (options.signal?.aborted) {
      subscriber.complete();
      return;
    }
    options.signal?.addEventListener('abort', ended, { once: true });
    void run();
    return () => {
      options.signal?.removeEventListener('abort', ended);
      stop();
    };
  });
}
