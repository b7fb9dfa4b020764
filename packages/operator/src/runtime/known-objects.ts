import type { KubeObject } from '@nestor/core';

/**
 * What a watch has emitted, by key: the emitted objects themselves (no copies), so that a
 * relist after 410 Gone can tell its subscriber only what changed while it was away.
 */
export class KnownObjects<T extends KubeObject> {
  private readonly objects = new Map<string, T>();

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  set(key: string, object: T): void {
    this.objects.set(key, object);
  }

  delete(key: string): void {
    this.objects.delete(key);
  }

  /** Starts a relist: feed it every listed object, then take what vanished. */
  relist(): RelistPass<T> {
    return new RelistPass(this.objects);
  }
}

/** One full LIST compared with what was emitted before it. */
export class RelistPass<T extends KubeObject> {
  /** Keys this list returned; not needed when nothing was known before it. */
  private readonly seen?: Set<string>;

  constructor(private readonly objects: Map<string, T>) {
    if (objects.size > 0) this.seen = new Set();
  }

  /**
   * Records a listed object and returns the event it calls for: ADDED for a new key,
   * MODIFIED when its resourceVersion moved, nothing when it is unchanged.
   */
  observe(key: string, object: T): 'ADDED' | 'MODIFIED' | undefined {
    this.seen?.add(key);
    const known = this.objects.get(key);
    if (known && known.metadata?.resourceVersion === object.metadata?.resourceVersion) return undefined;
    this.objects.set(key, object);
    return known ? 'MODIFIED' : 'ADDED';
  }

  /** Keeps a key the list returned but whose object could not be read: as it was known. */
  keep(key: string): void {
    this.seen?.add(key);
  }

  /** Removes and yields the last known state of every object the list did not return. */
  *vanished(): Generator<T> {
    if (!this.seen) return;
    for (const [key, object] of this.objects) {
      if (!this.seen.has(key)) {
        this.objects.delete(key);
        yield object;
      }
    }
  }
}
