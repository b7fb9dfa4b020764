import { operatorLabels, type Manifest } from './manifest.js';
import { metricsAuthRules, metricsReaderRole } from './metrics-auth-rules.js';
import { leaderElectionRules, rbacRulesFor, type ControllerAccess } from './rbac.js';

export interface OperatorRbacOptions {
  name: string;
  namespace: string;
  controllers: readonly ControllerAccess[];
  leaderElection: boolean;
}

/**
 * The operator's identity and rights: a ServiceAccount, a least-privilege
 * ClusterRole bound to it, a Role for leader election's Lease in its own namespace, and
 * the metrics-reader ClusterRole for whoever scrapes its secure /metrics.
 */
export function operatorRbac(options: OperatorRbacOptions): Manifest[] {
  const { name, namespace } = options;
  const labels = operatorLabels(name);
  const meta = (objectName: string, ns?: string) => ({ name: objectName, ...(ns ? { namespace: ns } : {}), labels });
  const subject = { kind: 'ServiceAccount', name, namespace };
  const rbac: Manifest[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(name, namespace) },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(name),
      // + the reviews secure /metrics makes of its callers
      rules: [...rbacRulesFor(options.controllers), ...metricsAuthRules()],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta(name),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [subject],
    },
  ];
  if (options.leaderElection) {
    const role = `${name}-leader-election`;
    rbac.push(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: meta(role, namespace),
        rules: leaderElectionRules(),
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: meta(role, namespace),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
        subjects: [subject],
      },
    );
  }
  // Secure /metrics: what Prometheus' ServiceAccount is to be bound to.
  rbac.push(metricsReaderRole(`${name}-metrics-reader`, labels));
  return rbac;
}
