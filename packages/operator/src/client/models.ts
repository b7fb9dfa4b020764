// client-node's models as they are on the wire: the types of every object Nestor returns.
// Interfaces rather than aliases, so that a message or a hover names `V1Job`, not its fields.
/* eslint-disable @typescript-eslint/no-empty-object-type -- each interface is its Wire<> base, named */
import type * as k8s from '@kubernetes/client-node';
import type { Wire } from './wire.js';

/** Event (core/v1) as the API server sends it: client-node's `CoreV1Event`, its times as strings. */
export interface CoreV1Event extends Wire<k8s.CoreV1Event> {}
/** Event (events.k8s.io/v1) as the API server sends it: client-node's `EventsV1Event`, its times as strings. */
export interface EventsV1Event extends Wire<k8s.EventsV1Event> {}
/** client-node's `V1Affinity`, its times as strings (`Wire`). */
export interface V1Affinity extends Wire<k8s.V1Affinity> {}
/** ClusterRole (rbac.authorization.k8s.io/v1) as the API server sends it: client-node's `V1ClusterRole`, its times as strings. */
export interface V1ClusterRole extends Wire<k8s.V1ClusterRole> {}
/** ClusterRoleBinding (rbac.authorization.k8s.io/v1) as the API server sends it: client-node's `V1ClusterRoleBinding`, its times as strings. */
export interface V1ClusterRoleBinding extends Wire<k8s.V1ClusterRoleBinding> {}
/** ConfigMap (core/v1) as the API server sends it: client-node's `V1ConfigMap`, its times as strings. */
export interface V1ConfigMap extends Wire<k8s.V1ConfigMap> {}
/** client-node's `V1ConfigMapVolumeSource`, its times as strings (`Wire`). */
export interface V1ConfigMapVolumeSource extends Wire<k8s.V1ConfigMapVolumeSource> {}
/** client-node's `V1Container`, its times as strings (`Wire`). */
export interface V1Container extends Wire<k8s.V1Container> {}
/** client-node's `V1ContainerPort`, its times as strings (`Wire`). */
export interface V1ContainerPort extends Wire<k8s.V1ContainerPort> {}
/** CronJob (batch/v1) as the API server sends it: client-node's `V1CronJob`, its times as strings. */
export interface V1CronJob extends Wire<k8s.V1CronJob> {}
/** client-node's `V1CronJobSpec`, its times as strings (`Wire`). */
export interface V1CronJobSpec extends Wire<k8s.V1CronJobSpec> {}
/** CustomResourceDefinition (apiextensions.k8s.io/v1) as the API server sends it: client-node's `V1CustomResourceDefinition`, its times as strings. */
export interface V1CustomResourceDefinition extends Wire<k8s.V1CustomResourceDefinition> {}
/** DaemonSet (apps/v1) as the API server sends it: client-node's `V1DaemonSet`, its times as strings. */
export interface V1DaemonSet extends Wire<k8s.V1DaemonSet> {}
/** client-node's `V1DaemonSetSpec`, its times as strings (`Wire`). */
export interface V1DaemonSetSpec extends Wire<k8s.V1DaemonSetSpec> {}
/** Deployment (apps/v1) as the API server sends it: client-node's `V1Deployment`, its times as strings. */
export interface V1Deployment extends Wire<k8s.V1Deployment> {}
/** client-node's `V1DeploymentCondition`, its times as strings (`Wire`). */
export interface V1DeploymentCondition extends Wire<k8s.V1DeploymentCondition> {}
/** client-node's `V1DeploymentSpec`, its times as strings (`Wire`). */
export interface V1DeploymentSpec extends Wire<k8s.V1DeploymentSpec> {}
/** client-node's `V1DeploymentStatus`, its times as strings (`Wire`). */
export interface V1DeploymentStatus extends Wire<k8s.V1DeploymentStatus> {}
/** client-node's `V1EnvFromSource`, its times as strings (`Wire`). */
export interface V1EnvFromSource extends Wire<k8s.V1EnvFromSource> {}
/** client-node's `V1EnvVar`, its times as strings (`Wire`). */
export interface V1EnvVar extends Wire<k8s.V1EnvVar> {}
/** Ingress (networking.k8s.io/v1) as the API server sends it: client-node's `V1Ingress`, its times as strings. */
export interface V1Ingress extends Wire<k8s.V1Ingress> {}
/** Job (batch/v1) as the API server sends it: client-node's `V1Job`, its times as strings. */
export interface V1Job extends Wire<k8s.V1Job> {}
/** client-node's `V1JobSpec`, its times as strings (`Wire`). */
export interface V1JobSpec extends Wire<k8s.V1JobSpec> {}
/** client-node's `V1JobStatus`, its times as strings (`Wire`). */
export interface V1JobStatus extends Wire<k8s.V1JobStatus> {}
/** client-node's `V1LabelSelector`, its times as strings (`Wire`). */
export interface V1LabelSelector extends Wire<k8s.V1LabelSelector> {}
/** client-node's `V1LabelSelectorRequirement`, its times as strings (`Wire`). */
export interface V1LabelSelectorRequirement extends Wire<k8s.V1LabelSelectorRequirement> {}
/** Lease (coordination.k8s.io/v1) as the API server sends it: client-node's `V1Lease`, its times as strings. */
export interface V1Lease extends Wire<k8s.V1Lease> {}
/** Namespace (core/v1) as the API server sends it: client-node's `V1Namespace`, its times as strings. */
export interface V1Namespace extends Wire<k8s.V1Namespace> {}
/** NetworkPolicy (networking.k8s.io/v1) as the API server sends it: client-node's `V1NetworkPolicy`, its times as strings. */
export interface V1NetworkPolicy extends Wire<k8s.V1NetworkPolicy> {}
/** Node (core/v1) as the API server sends it: client-node's `V1Node`, its times as strings. */
export interface V1Node extends Wire<k8s.V1Node> {}
/** client-node's `V1ObjectMeta`, its times as strings (`Wire`). */
export interface V1ObjectMeta extends Wire<k8s.V1ObjectMeta> {}
/** client-node's `V1ObjectReference`, its times as strings (`Wire`). */
export interface V1ObjectReference extends Wire<k8s.V1ObjectReference> {}
/** client-node's `V1OwnerReference`, its times as strings (`Wire`). */
export interface V1OwnerReference extends Wire<k8s.V1OwnerReference> {}
/** PersistentVolumeClaim (core/v1) as the API server sends it: client-node's `V1PersistentVolumeClaim`, its times as strings. */
export interface V1PersistentVolumeClaim extends Wire<k8s.V1PersistentVolumeClaim> {}
/** client-node's `V1PersistentVolumeClaimSpec`, its times as strings (`Wire`). */
export interface V1PersistentVolumeClaimSpec extends Wire<k8s.V1PersistentVolumeClaimSpec> {}
/** client-node's `V1PersistentVolumeClaimStatus`, its times as strings (`Wire`). */
export interface V1PersistentVolumeClaimStatus extends Wire<k8s.V1PersistentVolumeClaimStatus> {}
/** Pod (core/v1) as the API server sends it: client-node's `V1Pod`, its times as strings. */
export interface V1Pod extends Wire<k8s.V1Pod> {}
/** client-node's `V1PodSecurityContext`, its times as strings (`Wire`). */
export interface V1PodSecurityContext extends Wire<k8s.V1PodSecurityContext> {}
/** client-node's `V1PodSpec`, its times as strings (`Wire`). */
export interface V1PodSpec extends Wire<k8s.V1PodSpec> {}
/** client-node's `V1PodStatus`, its times as strings (`Wire`). */
export interface V1PodStatus extends Wire<k8s.V1PodStatus> {}
/** client-node's `V1PodTemplateSpec`, its times as strings (`Wire`). */
export interface V1PodTemplateSpec extends Wire<k8s.V1PodTemplateSpec> {}
/** client-node's `V1PolicyRule`, its times as strings (`Wire`). */
export interface V1PolicyRule extends Wire<k8s.V1PolicyRule> {}
/** client-node's `V1Probe`, its times as strings (`Wire`). */
export interface V1Probe extends Wire<k8s.V1Probe> {}
/** ReplicaSet (apps/v1) as the API server sends it: client-node's `V1ReplicaSet`, its times as strings. */
export interface V1ReplicaSet extends Wire<k8s.V1ReplicaSet> {}
/** client-node's `V1ResourceRequirements`, its times as strings (`Wire`). */
export interface V1ResourceRequirements extends Wire<k8s.V1ResourceRequirements> {}
/** Role (rbac.authorization.k8s.io/v1) as the API server sends it: client-node's `V1Role`, its times as strings. */
export interface V1Role extends Wire<k8s.V1Role> {}
/** RoleBinding (rbac.authorization.k8s.io/v1) as the API server sends it: client-node's `V1RoleBinding`, its times as strings. */
export interface V1RoleBinding extends Wire<k8s.V1RoleBinding> {}
/** Secret (core/v1) as the API server sends it: client-node's `V1Secret`, its times as strings. */
export interface V1Secret extends Wire<k8s.V1Secret> {}
/** client-node's `V1SecretVolumeSource`, its times as strings (`Wire`). */
export interface V1SecretVolumeSource extends Wire<k8s.V1SecretVolumeSource> {}
/** client-node's `V1SecurityContext`, its times as strings (`Wire`). */
export interface V1SecurityContext extends Wire<k8s.V1SecurityContext> {}
/** Service (core/v1) as the API server sends it: client-node's `V1Service`, its times as strings. */
export interface V1Service extends Wire<k8s.V1Service> {}
/** ServiceAccount (core/v1) as the API server sends it: client-node's `V1ServiceAccount`, its times as strings. */
export interface V1ServiceAccount extends Wire<k8s.V1ServiceAccount> {}
/** client-node's `V1ServicePort`, its times as strings (`Wire`). */
export interface V1ServicePort extends Wire<k8s.V1ServicePort> {}
/** client-node's `V1ServiceSpec`, its times as strings (`Wire`). */
export interface V1ServiceSpec extends Wire<k8s.V1ServiceSpec> {}
/** client-node's `V1ServiceStatus`, its times as strings (`Wire`). */
export interface V1ServiceStatus extends Wire<k8s.V1ServiceStatus> {}
/** StatefulSet (apps/v1) as the API server sends it: client-node's `V1StatefulSet`, its times as strings. */
export interface V1StatefulSet extends Wire<k8s.V1StatefulSet> {}
/** client-node's `V1StatefulSetCondition`, its times as strings (`Wire`). */
export interface V1StatefulSetCondition extends Wire<k8s.V1StatefulSetCondition> {}
/** client-node's `V1StatefulSetSpec`, its times as strings (`Wire`). */
export interface V1StatefulSetSpec extends Wire<k8s.V1StatefulSetSpec> {}
/** client-node's `V1StatefulSetStatus`, its times as strings (`Wire`). */
export interface V1StatefulSetStatus extends Wire<k8s.V1StatefulSetStatus> {}
/** client-node's `V1Toleration`, its times as strings (`Wire`). */
export interface V1Toleration extends Wire<k8s.V1Toleration> {}
/** client-node's `V1Volume`, its times as strings (`Wire`). */
export interface V1Volume extends Wire<k8s.V1Volume> {}
/** client-node's `V1VolumeMount`, its times as strings (`Wire`). */
export interface V1VolumeMount extends Wire<k8s.V1VolumeMount> {}

// (An import, then an export: API Extractor reads `export type { k8s }`, not `export type * as k8s`.)
export type {
  /**
   * Every other type of @kubernetes/client-node, by its name there, as client-node declares
   * it: its times are `Date`, where what Nestor returns has strings, so name one through
   * `Wire` (`@nestor/operator/runtime`): `Wire<k8s.V2HorizontalPodAutoscaler>`.
   * Left out of the API reference, which would otherwise copy all of client-node's.
   * @hidden
   */
  k8s,
};
