// Faults written straight into etcd through its v3 JSON gateway, past the API server.

/**
 * Compacts etcd's history up to its current revision, so any watch from an older
 * resourceVersion fails with 410 Gone. Returns the compacted revision.
 */
export async function compactEtcdHistory(etcdUrl: string): Promise<number> {
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await fetch(`${etcdUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`etcd ${path}: HTTP ${response.status}: ${await response.text()}`);
    return (await response.json()) as T;
  };
  // A write moves the revision past every object's, so all of them are compacted.
  const put = await post<{ header: { revision: string } }>('/v3/kv/put', {
    key: Buffer.from('/nestor-test/compaction-marker').toString('base64'),
    value: Buffer.from(String(Date.now())).toString('base64'),
  });
  const revision = Number(put.header.revision);
  await post('/v3/kv/compaction', { revision: String(revision), physical: true });
  return revision;
}

/** Writes `value` under `key` in etcd, as a restored backup or anyone with etcd access could. */
export async function putInEtcd(etcdUrl: string, key: string, value: Buffer): Promise<void> {
  const response = await fetch(`${etcdUrl}/v3/kv/put`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from(key).toString('base64'), value: value.toString('base64') }),
  });
  if (!response.ok) throw new Error(`etcd put ${key}: HTTP ${response.status}: ${await response.text()}`);
}
