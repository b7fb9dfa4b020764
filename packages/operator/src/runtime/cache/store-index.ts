/** Maps an object to the values it is indexed under (client-go's IndexFunc). */
export type IndexFunc<T> = (object: T) => readonly string[];

const NONE: readonly string[] = [];

/**
 * One index of a store: value -> keys of the objects indexed under it. Kept up to date on
 * each change from the object's old and new state, as client-go's threadSafeStore does,
 * so a lookup costs the size of its result and no change scans the store. Index functions
 * must be pure: the old values are recomputed from the old object, not stored.
 */
export class StoreIndex<T> {
  private readonly buckets = new Map<string, Set<string>>();

  constructor(private readonly fn: IndexFunc<T>) {}

  /** Moves `key` from the values of `old` to those of `next` (either may be absent). */
  update(key: string, old: T | undefined, next: T | undefined): void {
    const before = old === undefined ? NONE : this.fn(old);
    const after = next === undefined ? NONE : this.fn(next);
    if (sameValues(before, after)) return;
    for (const value of before) {
      if (after.includes(value)) continue;
      const bucket = this.buckets.get(value);
      bucket?.delete(key);
      if (bucket?.size === 0) this.buckets.delete(value);
    }
    for (const value of after) {
      let bucket = this.buckets.get(value);
      if (!bucket) this.buckets.set(value, (bucket = new Set()));
      bucket.add(key);
    }
  }

  /** Keys indexed under `value`. */
  keys(value: string): ReadonlySet<string> {
    return this.buckets.get(value) ?? EMPTY_SET;
  }

  /** The values with at least one key. */
  values(): IterableIterator<string> {
    return this.buckets.keys();
  }

  clear(): void {
    this.buckets.clear();
  }
}

const EMPTY_SET: ReadonlySet<string> = new Set();

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
