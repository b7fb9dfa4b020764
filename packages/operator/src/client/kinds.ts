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
} from './models.js';
import type { ResourceDescriptor } from '@nestor/core';

// The object types of the kinds below and the parts they are built from, as they are on the
// wire (`Wire`), so an operator names them from @nestor/operator alone. Types only.
export * from './models.js';

/** The object type of a kind's descriptor: `ObjectOf<typeof StatefulSet>` is V1StatefulSet. */
export type ObjectOf<R> = R extends ResourceDescriptor<infer T> ? T : never;

function kind<T>(
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced = true,
): ResourceDescriptor<T> {
  return Object.freeze({ group, version, kind, plural, namespaced });
}

// Built-in kinds as typed descriptors over @kubernetes/client-node's models, as on the wire.
/** Pod (core/v1, namespaced): its objects are `V1Pod`. */
export const Pod = kind<V1Pod>('', 'v1', 'Pod', 'pods');
/** Service (core/v1, namespaced): its objects are `V1Service`. */
export const Service = kind<V1Service>('', 'v1', 'Service', 'services');
/** ConfigMap (core/v1, namespaced): its objects are `V1ConfigMap`. */
export const ConfigMap = kind<V1ConfigMap>('', 'v1', 'ConfigMap', 'configmaps');
/** Secret (core/v1, namespaced): its objects are `V1Secret`. */
export const Secret = kind<V1Secret>('', 'v1', 'Secret', 'secrets');
/** ServiceAccount (core/v1, namespaced): its objects are `V1ServiceAccount`. */
export const ServiceAccount = kind<V1ServiceAccount>('', 'v1', 'ServiceAccount', 'serviceaccounts');
/** PersistentVolumeClaim (core/v1, namespaced): its objects are `V1PersistentVolumeClaim`. */
export const PersistentVolumeClaim = kind<V1PersistentVolumeClaim>(
  '',
  'v1',
  'PersistentVolumeClaim',
  'persistentvolumeclaims',
);
/** Namespace (core/v1, cluster-scoped): its objects are `V1Namespace`. */
export const Namespace = kind<V1Namespace>('', 'v1', 'Namespace', 'namespaces', false);
/** Node (core/v1, cluster-scoped): its objects are `V1Node`. */
export const Node = kind<V1Node>('', 'v1', 'Node', 'nodes', false);
/** Event (core/v1, namespaced): its objects are `CoreV1Event`. */
export const Event = kind<CoreV1Event>('', 'v1', 'Event', 'events');
/** Deployment (apps/v1, namespaced): its objects are `V1Deployment`. */
export const Deployment = kind<V1Deployment>('apps', 'v1', 'Deployment', 'deployments');
/** StatefulSet (apps/v1, namespaced): its objects are `V1StatefulSet`. */
export const StatefulSet = kind<V1StatefulSet>('apps', 'v1', 'StatefulSet', 'statefulsets');
/** DaemonSet (apps/v1, namespaced): its objects are `V1DaemonSet`. */
export const DaemonSet = kind<V1DaemonSet>('apps', 'v1', 'DaemonSet', 'daemonsets');
/** ReplicaSet (apps/v1, namespaced): its objects are `V1ReplicaSet`. */
export const ReplicaSet = kind<V1ReplicaSet>('apps', 'v1', 'ReplicaSet', 'replicasets');
/** Job (batch/v1, namespaced): its objects are `V1Job`. */
export const Job = kind<V1Job>('batch', 'v1', 'Job', 'jobs');
/** CronJob (batch/v1, namespaced): its objects are `V1CronJob`. */
export const CronJob = kind<V1CronJob>('batch', 'v1', 'CronJob', 'cronjobs');
/** Ingress (networking.k8s.io/v1, namespaced): its objects are `V1Ingress`. */
export const Ingress = kind<V1Ingress>('networking.k8s.io', 'v1', 'Ingress', 'ingresses');
/** NetworkPolicy (networking.k8s.io/v1, namespaced): its objects are `V1NetworkPolicy`. */
export const NetworkPolicy = kind<V1NetworkPolicy>('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies');
/** Role (rbac.authorization.k8s.io/v1, namespaced): its objects are `V1Role`. */
export const Role = kind<V1Role>('rbac.authorization.k8s.io', 'v1', 'Role', 'roles');
/** RoleBinding (rbac.authorization.k8s.io/v1, namespaced): its objects are `V1RoleBinding`. */
export const RoleBinding = kind<V1RoleBinding>('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings');
/** ClusterRole (rbac.authorization.k8s.io/v1, cluster-scoped): its objects are `V1ClusterRole`. */
export const ClusterRole = kind<V1ClusterRole>('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false);
/** ClusterRoleBinding (rbac.authorization.k8s.io/v1, cluster-scoped): its objects are `V1ClusterRoleBinding`. */
export const ClusterRoleBinding = kind<V1ClusterRoleBinding>(
  'rbac.authorization.k8s.io',
  'v1',
  'ClusterRoleBinding',
  'clusterrolebindings',
  false,
);
/** Lease (coordination.k8s.io/v1, namespaced): its objects are `V1Lease`. */
export const Lease = kind<V1Lease>('coordination.k8s.io', 'v1', 'Lease', 'leases');
/** Event (events.k8s.io/v1, namespaced): its objects are `EventsV1Event`. */
export const EventV1 = kind<EventsV1Event>('events.k8s.io', 'v1', 'Event', 'events');
/** CustomResourceDefinition (apiextensions.k8s.io/v1, cluster-scoped): its objects are `V1CustomResourceDefinition`. */
export const CustomResourceDefinition = kind<V1CustomResourceDefinition>(
  'apiextensions.k8s.io',
  'v1',
  'CustomResourceDefinition',
  'customresourcedefinitions',
  false,
);

/** Every built-in kind above, for the client's kind registry. */
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
