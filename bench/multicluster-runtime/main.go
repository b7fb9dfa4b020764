// The multicluster-runtime peer of bench/operators/nestor-fleet.mjs (bench/fleet.mjs): one
// process over a fleet of member clusters named by kubeconfig Secrets in a namespace of the
// management cluster (multicluster-runtime's kubeconfig provider, its label and key), with a
// uniform controller doing the benchmark reconcile of every Widget in every engaged member
// (a server-side apply of a child ConfigMap and a status patch). Driven by the line protocol
// of bench/operators/protocol.mjs: hello, ready, stats (with the engaged clusters), exit.
// Built by bench/lib/go-build.mjs into ~/.cache/nestor/bench.
//
//	bench-fleet-operator -kubeconfig FILE -secrets-namespace NS -workers 8 [-member-namespace NS] [-think-ms 0]
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"
	"sigs.k8s.io/multicluster-runtime/providers/kubeconfig"
)

var widgetGV = schema.GroupVersion{Group: "bench.nestor.dev", Version: "v1"}

// Widget is the benchmark's custom resource, as bench/controller-runtime types it.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetSpec struct {
	Size    int64  `json:"size"`
	Round   int64  `json:"round,omitempty"`
	Payload string `json:"payload,omitempty"`
}

type WidgetStatus struct {
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	Phase              string `json:"phase,omitempty"`
}

type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (in *Widget) DeepCopyInto(out *Widget) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

func (in *Widget) DeepCopyObject() kruntime.Object {
	out := new(Widget)
	in.DeepCopyInto(out)
	return out
}

func (in *WidgetList) DeepCopyObject() kruntime.Object {
	out := new(WidgetList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Widget, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// ---- the line protocol ----

var outMu sync.Mutex

func send(v map[string]any) {
	line, _ := json.Marshal(v)
	outMu.Lock()
	os.Stdout.Write(append(line, '\n'))
	outMu.Unlock()
}

func nowUs() int64 { return time.Now().UnixMicro() }

func cpuUs() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Sec*1e6 + ru.Utime.Usec + ru.Stime.Sec*1e6 + ru.Stime.Usec
}

// memory after a forced collection that also returns freed pages to the OS (FreeOSMemory),
// so that RSS after disengaging shows what the process gave back, not what the scavenger
// has not reached yet.
func memory(gc bool) map[string]any {
	if gc {
		runtime.GC()
		debug.FreeOSMemory()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return map[string]any{"heap": ms.HeapAlloc, "rss": rss(), "maxRss": ru.Maxrss * 1024}
}

func rss() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident int64
	fmt.Sscan(string(data), &size, &resident)
	return resident * int64(os.Getpagesize())
}

func fail(err error) {
	send(map[string]any{"ev": "error", "message": err.Error()})
	os.Exit(1)
}

// tokenNamespace is the namespace of the ServiceAccount whose token a member's kubeconfig
// holds (the kubernetes.io claim): several members share one API server in the bench, each
// its own namespace, and the kubeconfig provider's cluster options are the same for every
// member, so a member's cache learns its namespace from its credentials.
func tokenNamespace(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("the member's token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", err
	}
	var claims struct {
		Kubernetes struct {
			Namespace string `json:"namespace"`
		} `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Kubernetes.Namespace == "" {
		return "", fmt.Errorf("the member's token names no ServiceAccount namespace")
	}
	return claims.Kubernetes.Namespace, nil
}

func main() {
	flags := flag.NewFlagSet("bench-fleet-operator", flag.ExitOnError)
	kubeconfigPath := flags.String("kubeconfig", "", "the management cluster's kubeconfig file")
	secretsNamespace := flags.String("secrets-namespace", "", "namespace of the kubeconfig Secrets")
	workers := flags.Int("workers", 8, "MaxConcurrentReconciles of the one controller")
	memberNamespace := flags.String("member-namespace", "", "namespace watched in every member (default: its token's)")
	thinkMs := flags.Int("think-ms", 0, "time each reconcile waits on something outside, between its two writes")
	_ = flags.Parse(os.Args[1:])
	ctrl.SetLogger(logr.Discard())

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfigPath)
	if err != nil {
		fail(err)
	}
	cfg.QPS = -1
	cfg.UserAgent = "bench-multicluster-runtime"

	scheme := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	scheme.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(scheme, widgetGV)

	provider := kubeconfig.New(kubeconfig.Options{
		Namespace: *secretsNamespace,
		ClusterOptions: []cluster.Option{func(o *cluster.Options) {
			o.Scheme = scheme
			o.Cache.DefaultTransform = cache.TransformStripManagedFields()
			o.NewCache = func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
				ns := *memberNamespace
				if ns == "" {
					if ns, err = tokenNamespace(config.BearerToken); err != nil {
						return nil, err
					}
				}
				opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
				return cache.New(config, opts)
			}
		}},
		// As controller-runtime's own config loader: no client-side rate limit (client-go's
		// default for a rest.Config read from a kubeconfig is 5 requests/s).
		RESTOptions: []func(*rest.Config) error{func(c *rest.Config) error {
			c.QPS = -1
			c.UserAgent = "bench-multicluster-runtime"
			return nil
		}},
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	send(map[string]any{"ev": "hello", "pid": os.Getpid(), "runtime": runtime.Version()})

	mgr, err := mcmanager.New(cfg, provider, manager.Options{
		Scheme:                 scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{*secretsNamespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
	})
	if err != nil {
		fail(err)
	}
	if err := provider.SetupWithManager(ctx, mgr); err != nil {
		fail(err)
	}
	think := time.Duration(*thinkMs) * time.Millisecond
	err = mcbuilder.ControllerManagedBy(mgr).
		Named("widgets").
		For(&Widget{}, mcbuilder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{MaxConcurrentReconciles: *workers}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return ctrl.Result{}, err
			}
			return reconcileWidget(ctx, cl.GetClient(), req, think)
		}))
	if err != nil {
		fail(err)
	}

	commands := make(chan map[string]any, 1024)
	go func() {
		scanner := bufio.NewScanner(os.Stdin)
		scanner.Buffer(make([]byte, 1<<20), 1<<26)
		for scanner.Scan() {
			var cmd map[string]any
			if json.Unmarshal(scanner.Bytes(), &cmd) == nil {
				commands <- cmd
			}
		}
		close(commands) // the parent went away: stop
	}()
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fail(err)
		}
	}()
	if !mgr.GetLocalManager().GetCache().WaitForCacheSync(ctx) {
		fail(fmt.Errorf("the management cluster's cache did not sync"))
	}
	send(map[string]any{"ev": "ready", "at": nowUs()})
	for cmd := range commands {
		switch cmd["cmd"] {
		case "exit":
			cancel()
			os.Exit(0)
		case "stats":
			gc, _ := cmd["gc"].(bool)
			m := memory(gc)
			m["ev"] = "stats"
			m["cpuUs"] = cpuUs()
			m["at"] = nowUs()
			m["clusters"] = len(provider.ListClusters())
			send(m)
		}
	}
}

// reconcileWidget is the benchmark reconcile, in the request's cluster.
func reconcileWidget(ctx context.Context, c client.Client, req mcreconcile.Request, think time.Duration) (ctrl.Result, error) {
	var widget Widget
	if err := c.Get(ctx, req.NamespacedName, &widget); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	child := corev1ac.ConfigMap(widget.Name+"-child", widget.Namespace).
		WithData(map[string]string{
			"size":  strconv.FormatInt(widget.Spec.Size, 10),
			"round": strconv.FormatInt(widget.Spec.Round, 10),
		}).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(widgetGV.String()).
			WithKind("Widget").
			WithName(widget.Name).
			WithUID(widget.UID).
			WithController(true).
			WithBlockOwnerDeletion(true))
	if err := c.Apply(ctx, child, client.FieldOwner("bench"), client.ForceOwnership); err != nil {
		return ctrl.Result{}, err
	}
	if think > 0 {
		select {
		case <-time.After(think):
		case <-ctx.Done():
			return ctrl.Result{}, ctx.Err()
		}
	}
	patch := fmt.Sprintf(`{"status":{"observedGeneration":%d,"phase":"Ready"}}`, widget.Generation)
	if err := c.Status().Patch(ctx, &widget, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("bench")); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
