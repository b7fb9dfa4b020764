// The recorder's memory, pure and bounded: which Events it has seen lately (to count repeats
// into one Event's series) and how many writes each object may still make (client-go's
// EventSourceObjectSpamFilter: a token bucket per object). Both are LRU maps capped at a
// number of entries, so neither grows with the number of objects an operator ever saw.

/** An Event's type. */
export type EventType = 'Normal' | 'Warning';

/** An ObjectReference as Events carry it (regarding / involvedObject, related). */
export interface EventObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

/** One Event as the recorder keeps it: the first occurrence and how many followed. */
export interface EventSeries {
  /** The aggregation key: regarding object, type, reason, action, note, reporting controller. */
  readonly key: string;
  /** The spam filter's key: the regarding object. */
  readonly objectKey: string;
  readonly namespace: string;
  readonly regarding: EventObjectReference;
  readonly related?: EventObjectReference;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
  readonly reportingController: string;
  /** The controller whose reconcile or timer recorded it, if any: its writes are fenced by that controller's Lease. */
  readonly scope?: string;
  readonly firstTime: number;
  lastTime: number;
  /** Occurrences so far. */
  count: number;
  /** The count the API server has (0: not created yet). */
  written: number;
  /** The Event's name once created. */
  name?: string;
  /** Which API it was created with (patches go to the same). */
  api?: 'events.k8s.io/v1' | 'v1';
  /** idle: nothing to write; queued; writing; deferred: waits for its object's next token. */
  state: 'idle' | 'queued' | 'writing' | 'deferred';
}

/** A Map used as an LRU: get() moves an entry to the back; set() evicts from the front. */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K, only?: V): void {
    if (only === undefined || this.map.get(key) === only) this.map.delete(key);
  }
}

/**
 * Repeats of an Event within `windowMs` of its last occurrence: counted into it, not a new
 * Event (what both of client-go's recorders do, the core/v1 one by count, the
 * events.k8s.io one by series). After a quiet window the next occurrence starts anew.
 */
export class EventSeriesCache {
  private readonly entries: LruMap<string, EventSeries>;

  constructor(
    private readonly windowMs: number,
    capacity: number,
  ) {
    this.entries = new LruMap(capacity);
  }

  /** The live series of `key` with one more occurrence at `now`, or undefined when there is none. */
  repeat(key: string, now: number): EventSeries | undefined {
    const series = this.entries.get(key);
    if (!series) return undefined;
    if (now - series.lastTime > this.windowMs) {
      this.entries.delete(key);
      return undefined;
    }
    series.count++;
    series.lastTime = Math.max(series.lastTime, now);
    return series;
  }

  add(series: EventSeries): void {
    this.entries.set(series.key, series);
  }

  /** Forgets `series` (a dropped or failed create): the next occurrence starts a new one. */
  forget(series: EventSeries): void {
    this.entries.delete(series.key, series);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * A token bucket per object, as client-go's spam filter (burst 25, one token per 5 min):
 * each write about an object takes a token, so no object floods the API server with Events.
 */
export class ObjectTokenBuckets {
  private readonly buckets: LruMap<string, { tokens: number; last: number }>;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    capacity: number,
  ) {
    this.buckets = new LruMap(capacity);
  }

  /** Takes a token for `objectKey` if one is left at `now`. */
  take(objectKey: string, now: number): boolean {
    let bucket = this.buckets.get(objectKey);
    if (!bucket) {
      bucket = { tokens: this.burst, last: now };
      this.buckets.set(objectKey, bucket);
    } else if (now > bucket.last) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.last) * this.perSecond) / 1000);
      bucket.last = now;
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** How long until an empty bucket has a token again. */
  get refillMs(): number {
    return Math.ceil(1000 / this.perSecond);
  }
}
