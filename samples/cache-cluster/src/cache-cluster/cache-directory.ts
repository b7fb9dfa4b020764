// The company's cache directory: an API outside Kubernetes where clients look caches up by
// name. The operator registers each CacheCluster there and its finalizer deletes the entry,
// which no owner reference can do. Names are unique across namespaces, which the webhook
// checks when a CacheCluster is created.

/** A directory entry: one CacheCluster, by name. */
export interface DirectoryEntry {
  name: string;
  namespace: string;
  /** The CacheCluster's metadata.uid: a cluster deleted and created again is another entry. */
  uid: string;
  endpoint: string;
  replicas: number;
}

/**
 * The directory's API. An abstract class, so Nest injects it by type: the module provides
 * the in-memory stand-in below; a real operator provides its HTTP client instead.
 */
export abstract class CacheDirectory {
  abstract lookup(name: string): Promise<DirectoryEntry | undefined>;
  /** Creates or replaces the entry of that name. */
  abstract register(entry: DirectoryEntry): Promise<void>;
  /** Deletes the entry of that name; nothing if there is none. */
  abstract remove(name: string): Promise<void>;
}

/** The directory in memory, as a test or `npm start` without one uses it. */
export class InMemoryCacheDirectory extends CacheDirectory {
  readonly entries = new Map<string, DirectoryEntry>();
  /** Set to make every call fail, as an unreachable API would. */
  failure?: Error;

  async lookup(name: string): Promise<DirectoryEntry | undefined> {
    this.check();
    const entry = this.entries.get(name);
    return entry && { ...entry };
  }

  async register(entry: DirectoryEntry): Promise<void> {
    this.check();
    this.entries.set(entry.name, { ...entry });
  }

  async remove(name: string): Promise<void> {
    this.check();
    this.entries.delete(name);
  }

  private check(): void {
    if (this.failure) throw this.failure;
  }
}
