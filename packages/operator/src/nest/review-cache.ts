import { systemClock, type Clock } from '@nestor/core';

export interface ReviewCacheOptions<T> {
  /** How long a result is kept, by result (a denial may be kept shorter than an approval). */
  ttlMs: (value: T) => number;
  /** Bound on the results kept; the least recently used goes first (default 1024). */
  maxEntries?: number;
  clock?: Clock;
}

/**
 * Results of the API server's reviews (TokenReview, SubjectAccessReview), kept briefly so
 * that a scrape every few seconds does not cost two API requests each time. Concurrent
 * lookups of one key share one review; a review that fails (no answer) is not kept, so
 * the next request asks again.
 */
export class ReviewCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();
  private readonly pending = new Map<string, Promise<T>>();
  private readonly maxEntries: number;
  private readonly clock: Clock;

  constructor(private readonly options: ReviewCacheOptions<T>) {
    this.maxEntries = options.maxEntries ?? 1024;
    this.clock = options.clock ?? systemClock;
    if (!(this.maxEntries >= 1)) throw new Error(`ReviewCache: maxEntries must be at least 1, got ${this.maxEntries}`);
  }

  /** Results held now (expired ones included until they are looked up or pushed out). */
  get size(): number {
    return this.entries.size;
  }

  /** The kept result for `key`, else `review()`'s, kept for its TTL. */
  get(key: string, review: () => Promise<T>): Promise<T> {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      if (entry.expiresAt > this.clock.now()) {
        this.entries.set(key, entry); // most recently used last
        return Promise.resolve(entry.value);
      }
    }
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const settled = review()
      .then((value) => {
        this.keep(key, value);
        return value;
      })
      .finally(() => this.pending.delete(key));
    this.pending.set(key, settled);
    return settled;
  }

  private keep(key: string, value: T): void {
    const ttlMs = this.options.ttlMs(value);
    if (!(ttlMs > 0)) return;
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expiresAt: this.clock.now() + ttlMs });
  }
}
