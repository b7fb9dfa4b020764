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

/** One key and its value as etcd holds them. */
export interface EtcdEntry {
  key: string;
  value: Buffer;
  /** The etcd revision of its last write: the object's resourceVersion. */
  modRevision: number;
}

/**
 * The entries under `prefix` (the one key `prefix` with `{ exact: true }`), read straight
 * from etcd, past the API server: what is stored, in the version it was stored in.
 */
export async function readFromEtcd(
  etcdUrl: string,
  prefix: string,
  options: { exact?: boolean } = {},
): Promise<EtcdEntry[]> {
  const key = Buffer.from(prefix);
  // The range [prefix, prefix with its last byte + 1): every key that starts with it.
  const end = Buffer.from(key);
  end[end.length - 1]! += 1;
  const response = await fetch(`${etcdUrl}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({
      key: key.toString('base64'),
      ...(options.exact ? {} : { range_end: end.toString('base64') }),
    }),
  });
  if (!response.ok) throw new Error(`etcd range ${prefix}: HTTP ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as { kvs?: Array<{ key: string; value: string; mod_revision: string }> };
  return (body.kvs ?? []).map((kv) => ({
    key: Buffer.from(kv.key, 'base64').toString(),
    value: Buffer.from(kv.value, 'base64'),
    modRevision: Number(kv.mod_revision),
  }));
}
