import { existsSync, readFileSync } from 'node:fs';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The namespace the operator runs in, for what it keeps there (its Lease, its webhook
 * certificate): POD_NAMESPACE (the Downward API, as `nestor manifests` sets it), the pod's
 * service account namespace, else `fallback` (the module's namespace), else 'default'.
 */
export function ownNamespace(fallback?: string): string {
  if (process.env.POD_NAMESPACE) return process.env.POD_NAMESPACE;
  if (existsSync(SERVICE_ACCOUNT_NAMESPACE)) return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
  return fallback ?? 'default';
}
