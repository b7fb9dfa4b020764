package main

// The controller-runtime peer of the chaos suite's operator (bench/chaos.mjs), configured
// like packages/operator/src/test-support/lease-operator.ts through the environment:
// KUBECONFIG, NESTOR_NAMESPACE, NESTOR_IDENTITY, NESTOR_LEASE_ID, NESTOR_LEASE_MS,
// NESTOR_RENEW_MS, NESTOR_RETRY_MS, NESTOR_WORKERS. It reconciles ConfigMaps with leader
// election; each reconcile prints start/write/end JSON lines and, with data.write set,
// merge-patches the annotations nestor.test/written-by and nestor.test/observed.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

var chaosOut sync.Mutex

// chaosEvent is one line of the test protocol; nestorTest first, as the reader expects.
type chaosEvent struct {
	NestorTest bool   `json:"nestorTest"`
	Event      string `json:"event"`
	Identity   string `json:"identity"`
	At         int64  `json:"at"`
	Key        string `json:"key,omitempty"`
	Start      int64  `json:"start,omitempty"`
	End        int64  `json:"end,omitempty"`
	Ok         *bool  `json:"ok,omitempty"`
	Error      string `json:"error,omitempty"`
	Code       *int   `json:"code,omitempty"`
}

func chaosEmit(e chaosEvent) {
	e.NestorTest = true
	if e.At == 0 {
		e.At = time.Now().UnixMilli()
	}
	line, _ := json.Marshal(e)
	chaosOut.Lock()
	defer chaosOut.Unlock()
	fmt.Fprintln(os.Stdout, string(line))
}

func envMs(name string, fallback time.Duration) time.Duration {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return time.Duration(v) * time.Millisecond
	}
	return fallback
}

type chaosReconciler struct {
	client   client.Client
	identity string
}

func (r *chaosReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := req.Namespace + "/" + req.Name
	start := time.Now().UnixMilli()
	chaosEmit(chaosEvent{Event: "start", Identity: r.identity, Key: key, At: start})
	var cm corev1.ConfigMap
	if err := r.client.Get(ctx, req.NamespacedName, &cm); err != nil {
		chaosEmit(chaosEvent{Event: "end", Identity: r.identity, Key: key, Start: start, End: time.Now().UnixMilli()})
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var result error
	if cm.Data["write"] != "" {
		patch := map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			"nestor.test/written-by": r.identity,
			"nestor.test/observed":   cm.Data["v"],
		}}}
		body, _ := json.Marshal(patch)
		err := r.client.Patch(ctx, &cm, client.RawPatch(types.MergePatchType, body))
		if err != nil {
			no := false
			chaosEmit(chaosEvent{Event: "write", Identity: r.identity, Key: key, Ok: &no, Error: err.Error()})
			result = err
		} else {
			yes := true
			chaosEmit(chaosEvent{Event: "write", Identity: r.identity, Key: key, Ok: &yes})
		}
	}
	chaosEmit(chaosEvent{Event: "end", Identity: r.identity, Key: key, Start: start, End: time.Now().UnixMilli()})
	return ctrl.Result{}, result
}

func runChaos() {
	ctrl.SetLogger(logr.Discard())
	identity := os.Getenv("NESTOR_IDENTITY")
	namespace := os.Getenv("NESTOR_NAMESPACE")
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail(err)
	}
	cfg.QPS = -1 // as controller-runtime's own config loader: no client-side rate limit
	scheme := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	lease := envMs("NESTOR_LEASE_MS", 15*time.Second)
	renew := envMs("NESTOR_RENEW_MS", 10*time.Second)
	retry := envMs("NESTOR_RETRY_MS", 2*time.Second)
	workers, _ := strconv.Atoi(os.Getenv("NESTOR_WORKERS"))
	if workers < 1 {
		workers = 1
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		LeaderElection:                true,
		LeaderElectionID:              os.Getenv("NESTOR_LEASE_ID"),
		LeaderElectionNamespace:       namespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
	})
	if err != nil {
		fail(err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(&chaosReconciler{client: mgr.GetClient(), identity: identity})
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	chaosEmit(chaosEvent{Event: "ready", Identity: identity})
	if err := mgr.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "manager stopped:", err)
		one := 1
		chaosEmit(chaosEvent{Event: "exit", Identity: identity, Code: &one})
		os.Exit(1)
	}
	zero := 0
	chaosEmit(chaosEvent{Event: "exit", Identity: identity, Code: &zero})
}
