// What the operator may do in a member cluster: `nestor manifests` grants the operator's
// rights in its own cluster only, so each member needs this ClusterRole bound to the identity
// its kubeconfig Secret holds (a ServiceAccount's token, say). The e2e test binds exactly this.
import type { KubeObject, V1ClusterRole } from '@nestor/operator';

/**
 * The ClusterRole for the operator in a member: its labelled namespaces, quotas and
 * RoleBindings (watched, applied, deleted), and `bind` on the ClusterRoles TeamSpaces may
 * grant. Kubernetes lets a RoleBinding grant only what its writer holds or may bind, so a
 * TeamSpace asking for a ClusterRole outside `bindable` is refused there (403, in its status).
 */
export function memberClusterRole(
  name = 'teamspace-operator',
  bindable = ['edit', 'view'],
): V1ClusterRole & KubeObject {
  const manage = ['get', 'list', 'watch', 'create', 'patch', 'delete'];
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name },
    rules: [
      { apiGroups: [''], resources: ['namespaces', 'resourcequotas'], verbs: manage },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: manage },
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterroles'],
        verbs: ['bind'],
        resourceNames: bindable,
      },
    ],
  };
}
