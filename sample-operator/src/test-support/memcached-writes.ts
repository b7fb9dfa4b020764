// Writes of Memcacheds through either version, and the check that the operator acted on all
// of them: for the tests and the chaos suite that restart the sample while it is written.
import { KubeApiError } from '@nestor/operator';
import type { ApiClient } from '@nestor/testing';
import type { DeploymentObject } from '../kube-types.js';
import type { Memcached } from '../memcached/memcached.resource.js';

/** The path of the Memcacheds of `namespace` at `version`, or of the one named. */
export const memcacheds = (namespace: string, version: string, name = '') =>
  `/apis/cache.example.com/${version}/namespaces/${namespace}/memcacheds/${name}`;

/**
 * Writes the size of `name` through v1beta1 (even sizes) or v1alpha1 (odd); creates it when
 * missing. Returns the version written through.
 */
export async function writeSize(
  client: ApiClient,
  namespace: string,
  name: string,
  size: number,
): Promise<'v1alpha1' | 'v1beta1'> {
  const beta = size % 2 === 0;
  const spec = beta ? { replicas: size } : { size };
  const version = beta ? 'v1beta1' : 'v1alpha1';
  try {
    await client.request('PATCH', memcacheds(namespace, version, name), { spec }, 'application/merge-patch+json');
  } catch (error) {
    if (!(error instanceof KubeApiError && error.status === 404)) throw error;
    await client.request('POST', memcacheds(namespace, version), {
      apiVersion: `cache.example.com/${version}`,
      kind: 'Memcached',
      metadata: { name },
      spec,
    });
  }
  return version;
}

/**
 * What keeps the Memcacheds from being converged (empty when none): each must have the size
 * last written (`sizes`, by name), its Deployment run that many replicas, and its status
 * describe its generation. At most `limit` named, for a test's failure message.
 */
export async function unconverged(
  client: ApiClient,
  namespace: string,
  sizes: Map<string, number>,
  limit = 5,
): Promise<string[]> {
  const [list, deployments] = await Promise.all([
    client.request<{ items: Memcached[] }>('GET', memcacheds(namespace, 'v1alpha1')),
    client.request<{ items: DeploymentObject[] }>('GET', `/apis/apps/v1/namespaces/${namespace}/deployments`),
  ]);
  const replicas = new Map(deployments.items.map((d) => [d.metadata?.name, d.spec?.replicas]));
  const found: string[] = [];
  if (list.items.length !== sizes.size) found.push(`${list.items.length} Memcacheds stored, ${sizes.size} written`);
  for (const m of list.items) {
    if (found.length >= limit) break;
    const name = m.metadata.name!;
    const problems = [
      m.spec.size !== sizes.get(name) && `size ${m.spec.size}, written ${sizes.get(name)}`,
      replicas.get(name) !== m.spec.size && `Deployment replicas ${replicas.get(name)}`,
      m.status?.observedGeneration !== m.metadata.generation &&
        `observedGeneration ${m.status?.observedGeneration} of generation ${m.metadata.generation}`,
    ].filter(Boolean);
    if (problems.length) found.push(`${name}: ${problems.join(', ')}`);
  }
  return found;
}

/** Whether every Memcached is converged (see `unconverged`). */
export async function converged(client: ApiClient, namespace: string, sizes: Map<string, number>): Promise<boolean> {
  return (await unconverged(client, namespace, sizes, 1)).length === 0;
}
