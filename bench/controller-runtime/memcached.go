package main

// The controller-runtime peer of the sample operator's Memcached (sample-operator/src/memcached),
// for the chaos fault conversion-restart (bench/lib/chaos/conversion-restart.mjs): what a
// kubebuilder project's main.go and MemcachedReconciler do. One manager serves the kind's
// conversion (/convert, a webhook.Server) and reconciles it: finalizer, a server-side applied
// Deployment owned by the Memcached, an Event per change, the status through its subresource
// when it changed, a requeue after 5 s while the Deployment rolls out; the default single
// worker, as the sample's controller. Configured as the sample through its environment:
//
//	KUBECONFIG=FILE bench-operator -mode memcached -namespace NS -webhook-port P -webhook-cert-dir DIR
//
// Logs (funcr on stderr, client-go's klog too) are what the fault reads.

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

const (
	memcachedFinalizer    = "cache.example.com/finalizer"
	defaultMemcachedImage = "memcached:1.6.26-alpine3.19"
	rolloutRequeue        = 5 * time.Second
)

type MemcachedReconciler struct {
	client.Client
	Recorder recorder.EventRecorder
	Image    string
}

func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &Memcached{}
	if err := r.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !m.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(m, memcachedFinalizer) {
			return ctrl.Result{}, nil
		}
		r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, "Deleting", "Finalize",
			"Custom Resource %s is being deleted from the namespace %s", m.Name, m.Namespace)
		controllerutil.RemoveFinalizer(m, memcachedFinalizer)
		return ctrl.Result{}, r.Update(ctx, m)
	}
	if controllerutil.AddFinalizer(m, memcachedFinalizer) {
		if err := r.Update(ctx, m); err != nil {
			return ctrl.Result{}, err
		}
	}

	// A Deployment of that name that something else controls is not ours to take.
	current := &appsv1.Deployment{}
	if err := r.Get(ctx, req.NamespacedName, current); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		current = nil
	}
	if current != nil {
		if owner := metav1.GetControllerOf(current); owner != nil && owner.UID != m.UID {
			message := fmt.Sprintf("Deployment %s is controlled by %s %s: rename the Memcached or delete that Deployment",
				req.Name, owner.Kind, owner.Name)
			if err := r.updateStatus(ctx, m, memcachedStatus(m, nil, &failure{"DeploymentNotOwned", message})); err != nil {
				return ctrl.Result{}, err
			}
			return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("%s", message))
		}
	}

	deployment := r.deploymentFor(m)
	if err := r.Apply(ctx, deployment, client.FieldOwner("sample-operator"), client.ForceOwnership); err != nil {
		_ = r.updateStatus(ctx, m, memcachedStatus(m, nil, &failure{"ApplyFailed", err.Error()}))
		return ctrl.Result{}, err
	}
	r.recordChange(m, current)

	status := memcachedStatus(m, deployment, nil)
	if err := r.updateStatus(ctx, m, status); err != nil {
		return ctrl.Result{}, err
	}
	for _, c := range status.Conditions {
		if c.Type == "Progressing" && c.Status == "True" {
			return ctrl.Result{RequeueAfter: rolloutRequeue}, nil
		}
	}
	return ctrl.Result{}, nil
}

// updateStatus patches the status subresource only when it changed: every write is an event that reconciles again.
func (r *MemcachedReconciler) updateStatus(ctx context.Context, m *Memcached, status MemcachedStatus) error {
	if equality.Semantic.DeepEqual(m.Status, status) {
		return nil
	}
	before := m.DeepCopy()
	m.Status = status
	return r.Status().Patch(ctx, m, client.MergeFrom(before))
}

// recordChange records an Event for each change to the Deployment, as `kubectl describe memcached` shows them.
func (r *MemcachedReconciler) recordChange(m *Memcached, before *appsv1.Deployment) {
	if before == nil {
		r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, "Created", "Create",
			"Created Deployment %s with %d replicas", m.Name, m.Spec.Size)
		return
	}
	if before.Spec.Replicas != nil && *before.Spec.Replicas != m.Spec.Size {
		r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, "Scaled", "Scale",
			"Scaled Deployment %s: replicas %d -> %d", m.Name, *before.Spec.Replicas, m.Spec.Size)
	}
}

// deploymentFor is the Deployment a Memcached wants (the sample's memcached.deployment.ts), owned by it.
func (r *MemcachedReconciler) deploymentFor(m *Memcached) *appsv1ac.DeploymentApplyConfiguration {
	labels := map[string]string{
		"app.kubernetes.io/name":       "memcached",
		"app.kubernetes.io/instance":   m.Name,
		"app.kubernetes.io/managed-by": "sample-operator",
	}
	port := m.Spec.ContainerPort
	if port == 0 {
		port = 11211
	}
	container := corev1ac.Container().
		WithName("memcached").
		WithImage(r.Image).
		WithImagePullPolicy(corev1.PullIfNotPresent).
		WithCommand("memcached", fmt.Sprintf("--port=%d", port), "--memory-limit=64", "-o", "modern", "-v").
		WithPorts(corev1ac.ContainerPort().WithName("memcached").WithContainerPort(port).WithProtocol(corev1.ProtocolTCP)).
		WithSecurityContext(corev1ac.SecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(1001).
			WithAllowPrivilegeEscalation(false).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")))
	return appsv1ac.Deployment(m.Name, m.Namespace).
		WithLabels(labels).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(cacheV1alpha1.String()).
			WithKind("Memcached").
			WithName(m.Name).
			WithUID(m.UID).
			WithController(true).
			WithBlockOwnerDeletion(true)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(m.Spec.Size).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(labels).
				WithSpec(corev1ac.PodSpec().
					WithSecurityContext(corev1ac.PodSecurityContext().
						WithRunAsNonRoot(true).
						WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
					WithContainers(container))))
}

func runMemcached(namespace string, webhookPort int, certDir string) {
	log := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	ctrl.SetLogger(log)
	setup := log.WithName("setup")
	cfg, err := ctrl.GetConfig()
	if err != nil {
		setup.Error(err, "no kubeconfig")
		os.Exit(1)
	}
	scheme := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	addMemcachedToScheme(scheme)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// kubebuilder's scaffold: HTTP/2 off unless --enable-http2.
		WebhookServer: webhook.NewServer(webhook.Options{
			Port:    webhookPort,
			CertDir: certDir,
			TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
		}),
	})
	if err != nil {
		setup.Error(err, "unable to start manager")
		os.Exit(1)
	}
	image := os.Getenv("MEMCACHED_IMAGE")
	if image == "" {
		image = defaultMemcachedImage
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&Memcached{}).
		Owns(&appsv1.Deployment{}).
		Named("memcached").
		Complete(&MemcachedReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("memcached-controller"), Image: image})
	if err != nil {
		setup.Error(err, "unable to create controller")
		os.Exit(1)
	}
	// Registers /convert: Memcached is the hub, MemcachedV1beta1 converts through it.
	if err := ctrl.NewWebhookManagedBy(mgr, &Memcached{}).Complete(); err != nil {
		setup.Error(err, "unable to create webhook")
		os.Exit(1)
	}
	setup.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setup.Error(err, "problem running manager")
		os.Exit(1)
	}
}
