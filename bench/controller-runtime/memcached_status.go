package main

// A Memcached's status from its Deployment's, as the sample's memcached.status.ts computes it:
// Available / Progressing / Degraded with meta.SetStatusCondition's semantics, the generation
// the status describes, and the ready pods.

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
)

// failure says why the Deployment could not be applied.
type failure struct{ reason, message string }

// memcachedStatus is the status the Memcached should have; deployment is nil when it does not exist.
func memcachedStatus(m *Memcached, deployment *appsv1ac.DeploymentApplyConfiguration, why *failure) MemcachedStatus {
	size := m.Spec.Size
	var ds appsv1ac.DeploymentStatusApplyConfiguration
	if deployment != nil && deployment.Status != nil {
		ds = *deployment.Status
	}
	available := deref(ds.AvailableReplicas)
	pending := "the Deployment does not exist yet"
	var fault *failure
	if deployment != nil {
		pending = rolloutPending(deployment, ds, size)
		fault = deploymentFault(ds)
	}
	if why != nil {
		fault = why
	}

	status := m.Status.DeepCopy()
	set := func(kind, state, reason, message string) {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: kind, Status: metav1.ConditionStatus(state), Reason: reason, Message: message,
			ObservedGeneration: m.Generation,
		})
	}
	if available > 0 {
		set("Available", "True", "MinimumReplicasAvailable", fmt.Sprintf("%d/%d pods available", available, size))
	} else {
		set("Available", "False", "NoReplicasAvailable", fmt.Sprintf("0/%d pods available", size))
	}
	switch {
	case why != nil:
		set("Progressing", "False", why.reason, "the Deployment cannot be applied (see Degraded)")
	case pending != "":
		set("Progressing", "True", "RollingOut", pending)
	default:
		set("Progressing", "False", "RolloutComplete", fmt.Sprintf("Deployment has %d/%d pods available", size, size))
	}
	if fault != nil {
		set("Degraded", "True", fault.reason, fault.message)
	} else {
		set("Degraded", "False", "AsExpected", "no failure reported")
	}
	status.ObservedGeneration = m.Generation
	status.ReadyReplicas = deref(ds.ReadyReplicas)
	return *status
}

// rolloutPending is what the rollout still waits for, "" once it is complete (kubectl rollout status's checks).
func rolloutPending(d *appsv1ac.DeploymentApplyConfiguration, ds appsv1ac.DeploymentStatusApplyConfiguration, size int32) string {
	updated, total, available := deref(ds.UpdatedReplicas), deref(ds.Replicas), deref(ds.AvailableReplicas)
	switch {
	case deref(ds.ObservedGeneration) < deref(d.Generation):
		return "waiting for the Deployment controller to observe the new spec"
	case updated < size:
		return fmt.Sprintf("%d/%d pods updated", updated, size)
	case total > updated:
		return fmt.Sprintf("%d old pods terminating", total-updated)
	case available < size:
		return fmt.Sprintf("%d/%d pods available", available, size)
	}
	return ""
}

// deploymentFault is a failure the Deployment reports: pods it cannot create, or a rollout past its deadline.
func deploymentFault(ds appsv1ac.DeploymentStatusApplyConfiguration) *failure {
	for _, c := range ds.Conditions {
		kind, state, reason := deref(c.Type), deref(c.Status), deref(c.Reason)
		if kind == appsv1.DeploymentReplicaFailure && state == corev1.ConditionTrue {
			return &failure{"ReplicaFailure", deref(c.Message)}
		}
		if kind == appsv1.DeploymentProgressing && reason == "ProgressDeadlineExceeded" {
			return &failure{"ProgressDeadlineExceeded", deref(c.Message)}
		}
	}
	return nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
