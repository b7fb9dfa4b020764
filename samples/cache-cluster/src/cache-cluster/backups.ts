// The backups ConfigMap: one in the operator's own namespace, kept by whoever runs backups,
// says which CacheClusters take snapshots and how often. Each key names a cluster as
// `<namespace>.<name>`; its value is redis' snapshot rule (`save`), e.g. "900 1".
//
// apiVersion: v1
// kind: ConfigMap
// metadata: { name: backups, namespace: cache-system }
// data:
//   shop.sessions: "900 1"
//   shop.carts: "300 10"
import type { ObjectRef } from '@nestor/operator';

export const BACKUPS_CONFIGMAP = 'backups';

/** The key of a cluster in the backups ConfigMap. */
export const backupKey = (ref: ObjectRef) => `${ref.namespace}.${ref.name}`;

/** The cluster a key names; a namespace holds no dot, so the first dot ends it. */
export function clusterOfBackupKey(key: string): ObjectRef | undefined {
  const dot = key.indexOf('.');
  if (dot <= 0 || dot === key.length - 1) return undefined;
  return { namespace: key.slice(0, dot), name: key.slice(dot + 1) };
}

/**
 * Whether a value is a snapshot rule: pairs of seconds and changes ("900 1 300 10"). Anything
 * else would be written into the cache's configuration file as it is, so it is refused.
 */
export function isSnapshotRule(value: string): boolean {
  return value.length <= 200 && /^\d{1,9} \d{1,9}( \d{1,9} \d{1,9})*$/.test(value);
}
