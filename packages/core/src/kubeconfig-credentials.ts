import type { Agent as HttpAgent } from 'node:http';
import type { AgentOptions, RequestOptions } from 'node:https';
import type { KubeConfigSource } from './cluster-config.js';

/** TLS settings for the connection pool, from the kubeconfig's cluster and user. */
export type TlsMaterial = Pick<
  AgentOptions,
  'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'rejectUnauthorized' | 'servername'
>;

/** What the kubeconfig yields for the current context. */
export interface Credentials {
  tls: TlsMaterial;
  /** Authorization (bearer or basic) and impersonation headers, lower-cased. */
  headers: Record<string, string>;
  /** True when the auth can expire and must be read again now and then (exec, OIDC, token file). */
  expiring: boolean;
  /** client-node's agent, only used when the cluster goes through a proxy (proxy-url). */
  proxyAgent?: HttpAgent;
}

const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/**
 * Reads TLS material and auth through `KubeConfig.applyToHTTPSOptions`, which runs the
 * exec plugin, OIDC refresh or token-file read as needed (and caches their tokens).
 */
export async function readCredentials(kc: KubeConfigSource): Promise<Credentials> {
  const user = kc.getCurrentUser();
  const cluster = kc.getCurrentCluster();
  const options: RequestOptions = {};
  await kc.applyToHTTPSOptions(options);

  const tls: TlsMaterial = {};
  for (const key of TLS_KEYS) {
    if (options[key] !== undefined) (tls as Record<string, unknown>)[key] = options[key];
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (typeof value === 'string') headers[name.toLowerCase()] = value.trim();
  }
  if (options.auth) headers.authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
  return {
    tls,
    headers,
    expiring: Boolean(user?.exec || user?.authProvider),
    ...(cluster?.proxyUrl && options.agent ? { proxyAgent: options.agent as HttpAgent } : {}),
  };
}

/** True when the TLS material differs (an exec plugin may rotate the client certificate). */
export function tlsChanged(a: TlsMaterial, b: TlsMaterial): boolean {
  return TLS_KEYS.some((key) => !same(a[key], b[key]));
}

function same(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  return a === b;
}
