import type { KubeObject } from '@nestor/core';

/**
 * What a watch has emitted, by key: the emitted objects themselves (no copies), so that a
 * relist after 410 Gone can tell its subscriber only what changed while it was away. An
 * informer hands in its own store, so that each cached object has one entry and one key
 * (with 100,000 objects a second map and its keys cost about 8 MB).
 */
export class KnownObjects<T extends KubeObject> {
  constructor(private readonly objects: Map<string, T> = new Map()) {}

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  /** Stores `object` under `key`; returns what was there. */
  set(key: string, object: T): T | undefined {
    const old = this.objects.get(key);
    this.objects.set(key, object);
    return old;
  }

  /** Removes `key`; returns what was there. */
  delete(key: string): T | undefined {
    const old = this.objects.get(key);
    if (old !== undefined) this.objects.delete(key);
    return old;
  }

  /**
   * Starts a relist: feed it every listed object, then take what vanished. With `replace`,
   * every listed object is stored, unchanged ones included (see RelistPass.observe).
   */
  relist(replace = false): RelistPass<T> {
    return new RelistPass(this.objects, replace);
  }
}

/** One full LIST compared with what was emitted before it. */
export class RelistPass<T extends KubeObject> {
  /** Keys this list returned; not needed when nothing was known before it. */
  private readonly seen?: Set<string>;
  /** The object the last observe() replaced (MODIFIED), if any. */
  replaced?: T;

  constructor(
    private readonly objects: Map<string, T>,
    private readonly replace = false,
  ) {
    if (objects.size > 0) this.seen = new Set();
  }

  /**
   * Records a listed object, storing `kept` (what the store keeps of it), and returns the
   * event it calls for: ADDED for a new key, MODIFIED when its resourceVersion moved
   * (`replaced` is then the object before), nothing when it is unchanged (then stored only
   * when the pass replaces what was kept).
   */
  observe(key: string, object: T, kept: T = object): 'ADDED' | 'MODIFIED' | undefined {
    this.seen?.add(key);
    const known = this.objects.get(key);
    this.replaced = known;
    if (known && known.metadata?.resourceVersion === object.metadata?.resourceVersion) {
      if (this.replace) this.objects.set(key, kept);
      return undefined;
    }
    this.objects.set(key, kept);
    return known ? 'MODIFIED' : 'ADDED';
  }

  /** Keeps a key the list returned but whose object could not be read: as it was known. */
  keep(key: string): void {
    this.seen?.add(key);
  }

  /** Removes and yields the key and last known state of every object the list did not return. */
  *vanished(): Generator<[string, T]> {
    if (!this.seen) return;
    for (const entry of this.objects) {
      if (!this.seen.has(entry[0])) {
        this.objects.delete(entry[0]);
        yield entry;
      }
    }
  }
}
