import { existsSync, readFileSync } from 'node:fs';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The namespace the operator runs in, where it keeps its own things (its Lease, its
 * self-managed webhook certificate) and where a deployment puts what configures it:
 *
 * 1. `POD_NAMESPACE` (the Downward API; the Deployment `nestor manifests` writes sets it);
 * 2. the namespace of the pod's service account token, in a cluster;
 * 3. `fallback`: OperatorModule passes its `namespace` option (the watched namespace), so a
 *    local run against one namespace keeps everything there;
 * 4. `'default'`.
 *
 * Pass it as `@Watches`' namespace to watch objects in the operator's own namespace; `nestor
 * manifests` then grants the rights there.
 *
 * ```ts
 * @Watches(ConfigMap, { namespace: ownNamespace, labelSelector: 'cache.example.com/backups' })
 * backupsChanged(configMap: ConfigMap): ObjectRef[] { ... }
 *
 * // A provider that needs it: the same answer the operator's Lease and Secret use.
 * constructor(@Inject(OPERATOR_MODULE_OPTIONS) options: OperatorModuleOptions) {
 *   this.namespace = ownNamespace(options.namespace);
 * }
 * ```
 */
export function ownNamespace(fallback?: string): string {
  if (process.env.POD_NAMESPACE) return process.env.POD_NAMESPACE;
  if (existsSync(SERVICE_ACCOUNT_NAMESPACE)) return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
  return fallback ?? 'default';
}
