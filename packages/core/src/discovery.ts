import { KubeApiError } from './errors.js';
import { apiVersionOf, type ResourceDescriptor } from './resource.js';
import type { Transport } from './transport.js';

/**
 * The resource names (plurals, and subresources as `plural/status`) a group/version
 * serves, from its discovery document; undefined when the group/version is not served.
 */
export async function servedResources(
  transport: Pick<Transport, 'json'>,
  groupVersion: string,
  signal?: AbortSignal,
): Promise<Set<string> | undefined> {
  const path = groupVersion.includes('/') ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
  try {
    const list = await transport.json<{ resources?: Array<{ name: string }> }>('GET', path, {
      ...(signal ? { signal } : {}),
    });
    return new Set((list.resources ?? []).map((r) => r.name));
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 404) return undefined;
    throw error;
  }
}

/**
 * Why the API server does not serve a kind, or undefined when it does. One discovery
 * request per group/version: pass the same `cache` across calls to share them.
 */
export async function whyNotServed(
  transport: Pick<Transport, 'json'>,
  resource: ResourceDescriptor,
  cache: Map<string, Promise<Set<string> | undefined>> = new Map(),
): Promise<string | undefined> {
  const groupVersion = apiVersionOf(resource);
  let served = cache.get(groupVersion);
  if (!served) {
    served = servedResources(transport, groupVersion);
    cache.set(groupVersion, served);
  }
  const plurals = await served;
  if (!plurals) return `${groupVersion} is not served`;
  if (!plurals.has(resource.plural)) return `${groupVersion} has no resource "${resource.plural}"`;
  return undefined;
}
