import { operatorLabels, type Manifest } from './manifest.js';
import { rbacRulesFor, type ControllerAccess } from './rbac.js';

export interface MemberRbacOptions {
  /** The operator's name: its objects in each member are named after it. */
  name: string;
  /** Where its ServiceAccount lives in each member (the operator's namespace name). */
  namespace: string;
  /** What its controllers need in a member: those that run there, and the watches of members. */
  controllers: readonly ControllerAccess[];
}

/**
 * What each member cluster of a fleet needs, applied to every member: the namespace and a
 * ServiceAccount for the operator, a token Secret whose token the management cluster's
 * kubeconfig Secret carries, and a ClusterRole (cluster-wide: a member's controllers are
 * not confined to the management cluster's watched namespace) with exactly the rules of
 * the controllers that run or watch there, bound to that ServiceAccount.
 */
export function memberRbac(options: MemberRbacOptions): Manifest[] {
  const { name, namespace } = options;
  const labels = operatorLabels(name);
  const account = `${name}-member`;
  const meta = (objectName: string, ns?: string) => ({ name: objectName, ...(ns ? { namespace: ns } : {}), labels });
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: meta(namespace) },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(account, namespace) },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/service-account-token',
      metadata: {
        ...meta(`${account}-token`, namespace),
        annotations: { 'kubernetes.io/service-account.name': account },
      },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(account),
      rules: rbacRulesFor(options.controllers),
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta(account),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: account },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
  ] as Manifest[];
}
