/**
 * The resourceVersions a controller's own writes returned, so that the watch event each of
 * them causes (its echo) is known as one. Every write a reconcile makes to its object (a
 * status patch, an annotation, a finalizer) or to a child it owns comes back as an event
 * that requests another reconcile of that object; it must still run (level-triggered: it
 * confirms the state), but it rarely has work to do, so the queue runs it behind the
 * changes that came from elsewhere (`WorkQueue.add(key, 'low')`). Under load, with every
 * write echoed, a change another actor made waited behind as many echoes as there were
 * objects changed before it.
 *
 * An event is an echo when its object's resourceVersion is the one the controller's write
 * to that object returned: exactly the state the write produced. A write by anyone after it
 * has another resourceVersion, and its event requests the reconcile at normal priority.
 *
 * Bounded: only the kinds a controller follows (`follow`) are recorded, one resourceVersion
 * per object (the last write's), and an object's entry goes with its next event, echo or
 * not (a write that changed nothing has no event; its entry waits for the object's next one).
 * @internal
 */
export class WriteEchoes {
  /** controller -> resource name (resourceName()) -> object key -> resourceVersion written. */
  private readonly written = new Map<string, Map<string, Map<string, string>>>();

  /** Records the writes of `controller` to objects of `resource` from now on. */
  follow(controller: string, resource: string): void {
    let kinds = this.written.get(controller);
    if (!kinds) this.written.set(controller, (kinds = new Map()));
    if (!kinds.has(resource)) kinds.set(resource, new Map());
  }

  /** Stops recording for `controller` and forgets what it wrote. */
  unfollow(controller: string): void {
    this.written.delete(controller);
  }

  /** A write of `controller` to the object `key` of `resource` returned `resourceVersion`. */
  record(controller: string, resource: string, key: string, resourceVersion: string): void {
    this.written.get(controller)?.get(resource)?.set(key, resourceVersion);
  }

  /**
   * Whether an event of the object `key` at `resourceVersion` echoes the last write of
   * `controller` to it. Forgets that write either way: the next event is no echo of it.
   */
  take(controller: string, resource: string, key: string, resourceVersion: string | undefined): boolean {
    const objects = this.written.get(controller)?.get(resource);
    if (!objects || objects.size === 0) return false;
    const written = objects.get(key);
    if (written === undefined) return false;
    objects.delete(key);
    return written === resourceVersion;
  }

  /** Objects with a write awaiting its event, over every controller (for tests and stats). */
  get pending(): number {
    let total = 0;
    for (const kinds of this.written.values()) for (const objects of kinds.values()) total += objects.size;
    return total;
  }
}
