package main

// The controller-runtime peer of bench/startup.mjs's operators (bench/operators/startup-*.mjs):
// a Widget controller that owns ConfigMaps, set up as a kubebuilder project sets it up
// (the scheme, a manager with a health probe server and kubebuilder's readyz check,
// healthz.Ping). Configured through the environment (NESTOR_STARTUP=1, KUBECONFIG,
// NESTOR_NAMESPACE, NESTOR_HEALTH_ADDR, NESTOR_FIRST_OBJECT=0 to leave that hook out). It
// prints JSON lines with `at` on the wall clock in microseconds: imported (main() runs),
// first-object (the first object an informer receives), synced (both informers synced),
// reconcile (the first reconcile starts).

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

type startupReconciler struct {
	once sync.Once
}

func (r *startupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.once.Do(func() { send(map[string]any{"ev": "reconcile", "at": nowUs()}) })
	return ctrl.Result{}, nil
}

func runStartup() {
	send(map[string]any{"ev": "imported", "at": nowUs()})
	ctrl.SetLogger(logr.Discard())
	namespace := os.Getenv("NESTOR_NAMESPACE")
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail(err)
	}
	cfg.QPS = -1
	scheme := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	scheme.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(scheme, widgetGV)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{namespace: {}},
			DefaultTransform:  cache.TransformStripManagedFields(),
		},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: os.Getenv("NESTOR_HEALTH_ADDR"),
	})
	if err != nil {
		fail(err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		fail(err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		fail(err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&Widget{}).
		Owns(&corev1.ConfigMap{}).
		Complete(&startupReconciler{})
	if err != nil {
		fail(err)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if os.Getenv("NESTOR_FIRST_OBJECT") != "0" {
		go reportFirstObject(ctx, mgr.GetCache())
	}
	if err := mgr.Start(ctx); err != nil {
		fail(err)
	}
}

// reportFirstObject prints when the first object reaches either informer, then when both
// have synced. Getting an informer needs discovery: it is retried until the API server answers.
func reportFirstObject(ctx context.Context, c cache.Cache) {
	var once sync.Once
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { once.Do(func() { send(map[string]any{"ev": "first-object", "at": nowUs()}) }) },
	}
	for _, object := range []client.Object{&Widget{}, &corev1.ConfigMap{}} {
		for ctx.Err() == nil {
			informer, err := c.GetInformer(ctx, object, cache.BlockUntilSynced(false))
			if err == nil {
				_, _ = informer.AddEventHandler(handler)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if c.WaitForCacheSync(ctx) {
		send(map[string]any{"ev": "synced", "at": nowUs()})
	}
}
