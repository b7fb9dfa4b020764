// What a TeamSpace wants in each member cluster it selects: pure functions of the TeamSpace,
// server-side applied there by the controller. Each carries the TeamSpace's name as a label:
// the member watches select on it and map what changes back to the TeamSpace, and the label
// is what tells this operator's namespaces from everyone else's (it never adopts another).
import type { k8s, KubeObject, ResourceDescriptor, V1Namespace, V1RoleBinding } from '@nestor/operator';
import type { Wire } from '@nestor/operator/runtime';
import type { TeamSpace } from './teamspace.resource.js';

/** The label on everything a TeamSpace makes in a member: the TeamSpace's name. */
export const TEAMSPACE_LABEL = 'teams.example.com/teamspace';
/** The name of the ResourceQuota and of the RoleBinding in the namespace. */
export const OBJECT_NAME = 'teamspace';

/** ResourceQuota (core/v1) is not among the framework's built-in kinds: its descriptor. */
export const ResourceQuota: ResourceDescriptor<k8s.V1ResourceQuota> = Object.freeze({
  group: '',
  version: 'v1',
  kind: 'ResourceQuota',
  plural: 'resourcequotas',
  namespaced: true,
});

export type NamespaceObject = V1Namespace & KubeObject;
// Wire<>: client-node's model with its times as the strings the API server sends.
export type ResourceQuotaObject = Wire<k8s.V1ResourceQuota> & KubeObject;
export type RoleBindingObject = V1RoleBinding & KubeObject;

const labelsOf = (space: TeamSpace) => ({
  [TEAMSPACE_LABEL]: space.metadata.name!,
  'app.kubernetes.io/managed-by': 'teamspace-operator',
});

export function namespaceFor(space: TeamSpace): NamespaceObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: space.spec.namespace, labels: labelsOf(space) },
  };
}

export function quotaFor(space: TeamSpace): ResourceQuotaObject {
  const { cpu, memory, pods } = space.spec.quota;
  return {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: OBJECT_NAME, namespace: space.spec.namespace, labels: labelsOf(space) },
    spec: { hard: { 'requests.cpu': String(cpu), 'requests.memory': String(memory), pods: String(pods) } },
  };
}

export function roleBindingFor(space: TeamSpace): RoleBindingObject {
  const { clusterRole, groups = [], users = [] } = space.spec.access;
  const subject = (kind: 'Group' | 'User') => (name: string) => ({
    kind,
    name,
    apiGroup: 'rbac.authorization.k8s.io',
  });
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: OBJECT_NAME, namespace: space.spec.namespace, labels: labelsOf(space) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
    subjects: [...groups.map(subject('Group')), ...users.map(subject('User'))],
  };
}

/** The TeamSpace an object of a member belongs to, by its label. */
export function teamSpaceOf(object: KubeObject | undefined): string | undefined {
  return object?.metadata?.labels?.[TEAMSPACE_LABEL];
}
