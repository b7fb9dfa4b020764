import { systemClock, type Clock } from '@nestor/core';

export interface ReviewCacheOptions<T> {
  /** Whether a result lets the caller in (an approval) or not (a refusal). */
  approves: (value: T) => boolean;
  /** How long an approval is kept. */
  approvalTtlMs: number;
  /** How long a refusal is kept (0: not kept). */
  refusalTtlMs: number;
  /** Bound on the approvals kept, and apart from them on the refusals kept; the least recently used goes first (default 1024). */
  maxEntries?: number;
  clock?: Clock;
}

interface Entry<T> {
  value: T;
  expiresAt: number;
}

/**
 * Results of the API server's reviews (TokenReview, SubjectAccessReview), kept briefly so
 * that a scrape every few seconds does not cost two API requests each time. Approvals and
 * refusals are kept in two bounded LRUs, so a flood of refusals (made-up tokens) pushes out
 * older refusals, never the approval a legitimate caller relies on. An expired approval
 * stays until pushed out by newer approvals: its key is known, and the next review says so
 * (see `get`). Concurrent lookups of one key share one review; a review that fails (no
 * answer) is not kept, so the next request asks again.
 */
export class ReviewCache<T> {
  private readonly approvals = new Map<string, Entry<T>>();
  private readonly refusals = new Map<string, Entry<T>>();
  private readonly pending = new Map<string, Promise<T>>();
  private readonly maxEntries: number;
  private readonly clock: Clock;

  constructor(private readonly options: ReviewCacheOptions<T>) {
    this.maxEntries = options.maxEntries ?? 1024;
    this.clock = options.clock ?? systemClock;
    if (!(this.maxEntries >= 1)) throw new Error(`ReviewCache: maxEntries must be at least 1, got ${this.maxEntries}`);
  }

  /** Results held now, approvals and refusals (expired ones included until they are looked up or pushed out). */
  get size(): number {
    return this.approvals.size + this.refusals.size;
  }

  /** Approvals held now, expired ones included. */
  get approvalCount(): number {
    return this.approvals.size;
  }

  /**
   * The kept result for `key`, else `review()`'s, kept for its TTL. `review` is told
   * whether the key was approved before (an expired approval is held): a caller may
   * limit reviews of keys never approved without delaying those it let in before.
   */
  get(key: string, review: (approvedBefore: boolean) => Promise<T>): Promise<T> {
    const now = this.clock.now();
    const approval = this.approvals.get(key);
    if (approval) {
      this.approvals.delete(key);
      this.approvals.set(key, approval); // most recently used last, expired or not
      if (approval.expiresAt > now) return Promise.resolve(approval.value);
    } else {
      const refusal = this.refusals.get(key);
      if (refusal) {
        this.refusals.delete(key);
        if (refusal.expiresAt > now) {
          this.refusals.set(key, refusal);
          return Promise.resolve(refusal.value);
        }
      }
    }
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const settled = review(approval !== undefined)
      .then((value) => {
        this.keep(key, value);
        return value;
      })
      .finally(() => this.pending.delete(key));
    this.pending.set(key, settled);
    return settled;
  }

  private keep(key: string, value: T): void {
    this.approvals.delete(key);
    this.refusals.delete(key);
    const approved = this.options.approves(value);
    const ttlMs = approved ? this.options.approvalTtlMs : this.options.refusalTtlMs;
    if (!(ttlMs > 0)) return;
    const entries = approved ? this.approvals : this.refusals;
    while (entries.size >= this.maxEntries) entries.delete(entries.keys().next().value!);
    entries.set(key, { value, expiresAt: this.clock.now() + ttlMs });
  }
}
