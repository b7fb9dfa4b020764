import type {
  CoreV1Event,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1CronJob,
  V1CustomResourceDefinition,
  V1DaemonSet,
  V1Deployment,
  V1Ingress,
  V1Job,
  V1Lease,
  V1Namespace,
  V1NetworkPolicy,
  V1Node,
  V1PersistentVolumeClaim,
  V1Pod,
  V1ReplicaSet,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1StatefulSet,
  EventsV1Event,
} from '@kubernetes/client-node';
import type { ResourceDescriptor } from '@nestor/core';

function kind<T>(
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced = true,
): ResourceDescriptor<T> {
  return Object.freeze({ group, version, kind, plural, namespaced });
}

// Built-in kinds as typed descriptors over @kubernetes/client-node's models.
export const Pod = kind<V1Pod>('', 'v1', 'Pod', 'pods');
export const Service = kind<V1Service>('', 'v1', 'Service', 'services');
export const ConfigMap = kind<V1ConfigMap>('', 'v1', 'ConfigMap', 'configmaps');
export const Secret = kind<V1Secret>('', 'v1', 'Secret', 'secrets');
export const ServiceAccount = kind<V1ServiceAccount>('', 'v1', 'ServiceAccount', 'serviceaccounts');
export const PersistentVolumeClaim = kind<V1PersistentVolumeClaim>(
  '',
  'v1',
  'PersistentVolumeClaim',
  'persistentvolumeclaims',
);
export const Namespace = kind<V1Namespace>('', 'v1', 'Namespace', 'namespaces', false);
export const Node = kind<V1Node>('', 'v1', 'Node', 'nodes', false);
export const Event = kind<CoreV1Event>('', 'v1', 'Event', 'events');
export const Deployment = kind<V1Deployment>('apps', 'v1', 'Deployment', 'deployments');
export const StatefulSet = kind<V1StatefulSet>('apps', 'v1', 'StatefulSet', 'statefulsets');
export const DaemonSet = kind<V1DaemonSet>('apps', 'v1', 'DaemonSet', 'daemonsets');
export const ReplicaSet = kind<V1ReplicaSet>('apps', 'v1', 'ReplicaSet', 'replicasets');
export const Job = kind<V1Job>('batch', 'v1', 'Job', 'jobs');
export const CronJob = kind<V1CronJob>('batch', 'v1', 'CronJob', 'cronjobs');
export const Ingress = kind<V1Ingress>('networking.k8s.io', 'v1', 'Ingress', 'ingresses');
export const NetworkPolicy = kind<V1NetworkPolicy>('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies');
export const Role = kind<V1Role>('rbac.authorization.k8s.io', 'v1', 'Role', 'roles');
export const RoleBinding = kind<V1RoleBinding>('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings');
export const ClusterRole = kind<V1ClusterRole>('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false);
export const ClusterRoleBinding = kind<V1ClusterRoleBinding>(
  'rbac.authorization.k8s.io',
  'v1',
  'ClusterRoleBinding',
  'clusterrolebindings',
  false,
);
export const Lease = kind<V1Lease>('coordination.k8s.io', 'v1', 'Lease', 'leases');
export const EventV1 = kind<EventsV1Event>('events.k8s.io', 'v1', 'Event', 'events');
export const CustomResourceDefinition = kind<V1CustomResourceDefinition>(
  'apiextensions.k8s.io',
  'v1',
  'CustomResourceDefinition',
  'customresourcedefinitions',
  false,
);

export const builtinKinds: readonly ResourceDescriptor[] = [
  Pod,
  Service,
  ConfigMap,
  Secret,
  ServiceAccount,
  PersistentVolumeClaim,
  Namespace,
  Node,
  Event,
  Deployment,
  StatefulSet,
  DaemonSet,
  ReplicaSet,
  Job,
  CronJob,
  Ingress,
  NetworkPolicy,
  Role,
  RoleBinding,
  ClusterRole,
  ClusterRoleBinding,
  Lease,
  CustomResourceDefinition,
];
