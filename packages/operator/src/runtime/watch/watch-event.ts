/** A change of one object, or SYNCED once a complete (re)list has been emitted. */
export type WatchEvent<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T } | { type: 'SYNCED' };
