// etcd's history compacted: every watch resumes into 410 Gone and relists.
export const name = 'etcd-compaction';
export const title = 'etcd compacted (the API server restarted to drop its watch cache)';
export const modes = ['single', 'replicas'];
export const order = 20;

export async function inject({ env }) {
  await env.compactEtcd();
  return Date.now();
}
