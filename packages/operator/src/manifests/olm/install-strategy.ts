// A CSV's install strategy from the objects `nestor manifests` generates: OLM makes the
// Deployment, the ServiceAccount and the rights bound to it from the CSV, so the Deployment
// goes in as its spec, the Roles and ClusterRoles bound to the operator's ServiceAccount as
// its permissions and clusterPermissions, and the rest stays objects of the bundle.
import type { Manifest } from '../manifest.js';
import type { PolicyRule } from '../rbac.js';

/** `spec.install.spec.permissions[]` or `clusterPermissions[]` of a CSV. */
export interface OlmPermission {
  serviceAccountName: string;
  rules: PolicyRule[];
}

/** `spec.install` of a CSV: the `deployment` strategy. */
export interface OlmInstallStrategy {
  strategy: 'deployment';
  spec: {
    deployments: Array<{ name: string; label?: Record<string, string>; spec: unknown }>;
    permissions?: OlmPermission[];
    clusterPermissions?: OlmPermission[];
  };
}

interface Binding extends Manifest {
  roleRef: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
}

/**
 * The install strategy, and the objects left for the bundle's manifests/ (RBAC that is not
 * the operator's: the metrics-reader ClusterRole and its bindings for Prometheus). A Role
 * bound to the operator outside the namespaces OLM grants it rights in (its own, and the
 * one it watches) cannot be said in a CSV, and is refused.
 */
export function installStrategy(
  operator: { name: string; namespace: string; watchNamespace?: string },
  deployments: readonly Manifest[],
  rbac: readonly Manifest[],
): { install: OlmInstallStrategy; objects: Manifest[] } {
  const isOperator = (subject: { kind: string; name: string; namespace?: string }) =>
    subject.kind === 'ServiceAccount' && subject.name === operator.name && subject.namespace === operator.namespace;
  const bindings = rbac.filter(
    (object): object is Binding =>
      (object.kind === 'RoleBinding' || object.kind === 'ClusterRoleBinding') &&
      ((object as Binding).subjects ?? []).some(isOperator),
  );
  const roleOf = (binding: Binding) =>
    rbac.find(
      (object) =>
        object.kind === binding.roleRef.kind &&
        object.metadata.name === binding.roleRef.name &&
        (binding.roleRef.kind === 'ClusterRole' || object.metadata.namespace === binding.metadata.namespace),
    );
  const used = new Set<Manifest>(bindings);
  const namespaced: PolicyRule[] = [];
  const clusterWide: PolicyRule[] = [];
  for (const binding of bindings) {
    const role = roleOf(binding);
    if (!role) throw new Error(`${binding.kind} ${binding.metadata.name} names a ${binding.roleRef.kind} not written`);
    used.add(role);
    const rules = (role as Manifest & { rules: PolicyRule[] }).rules;
    if (binding.kind === 'ClusterRoleBinding') {
      clusterWide.push(...rules);
      continue;
    }
    const where = binding.metadata.namespace;
    if (where !== operator.namespace && where !== operator.watchNamespace)
      throw new Error(
        `the operator needs rights in the namespace ${where} (the ${role.kind} ${role.metadata.name}), but OLM grants a ` +
          `CSV's permissions only in the operator's namespace and those it watches: drop the @Watches or @Controller ` +
          `namespace ${where}, or install the operator with nestor manifests --out or --helm`,
      );
    namespaced.push(...rules);
  }
  const account = operator.name;
  const others = rbac.filter(
    (object) =>
      !used.has(object) &&
      !(object.kind === 'ServiceAccount' && object.metadata.name === account) &&
      !(object.kind === 'Namespace'),
  );
  return {
    install: {
      strategy: 'deployment',
      spec: {
        deployments: deployments.map((deployment) => ({
          name: deployment.metadata.name,
          ...(deployment.metadata.labels ? { label: deployment.metadata.labels } : {}),
          spec: deployment.spec,
        })),
        ...(namespaced.length ? { permissions: [{ serviceAccountName: account, rules: namespaced }] } : {}),
        ...(clusterWide.length ? { clusterPermissions: [{ serviceAccountName: account, rules: clusterWide }] } : {}),
      },
    },
    objects: others,
  };
}
