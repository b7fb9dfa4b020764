// The controller-runtime peer of the Nestor benchmark operator: the same reconcile of the
// same Widget custom resource, driven by the same line protocol on stdin/stdout (see
// bench/operators/protocol.mjs). Built by bench/lib/go-build.mjs into ~/.cache/nestor/bench.
//
//	bench-operator -kubeconfig FILE -namespace NS -mode sync|reconcile -workers 8 [-content-type application/json]
//	  [-sync-kind configmap|widget] [-owns configmap]
//	bench-operator -mode webhook -cert-dir DIR [-host H] [-port P]   (webhook.go)
//	bench-operator -mode memcached -namespace NS -webhook-port P -webhook-cert-dir DIR   (memcached.go)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

const writtenAtAnnotation = "bench.nestor.dev/written-at"

var widgetGV = schema.GroupVersion{Group: "bench.nestor.dev", Version: "v1"}

// Widget is the benchmark's custom resource, typed as a kubebuilder project would type it.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetSpec struct {
	Size  int64 `json:"size"`
	Round int64 `json:"round,omitempty"`
	// Payload makes the sync scenario's Widgets ~1 KiB, as its ConfigMaps.
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
	out.TypeMeta = in.TypeMeta
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

func memory(gc bool) map[string]any {
	if gc {
		runtime.GC()
		runtime.GC()
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

// Recorder counts reconciles and the latency from the load generator's write to reconcile start.
type Recorder struct {
	mu         sync.Mutex
	reconciles int64
	inFlight   int64
	latencies  []int64
	lastSeen   map[string]string
	done       map[string]struct{}
	expect     int
	announced  bool
}

func newRecorder() *Recorder {
	return &Recorder{lastSeen: map[string]string{}, done: map[string]struct{}{}}
}

func (r *Recorder) start(key, writtenAt string, at int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight++
	if writtenAt != "" && r.lastSeen[key] != writtenAt {
		r.lastSeen[key] = writtenAt
		if t, err := strconv.ParseInt(writtenAt, 10, 64); err == nil {
			r.latencies = append(r.latencies, at-t)
		}
	}
}

func (r *Recorder) finish(key string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight--
	if !ok {
		return
	}
	r.reconciles++
	r.done[key] = struct{}{}
	r.checkAll()
}

func (r *Recorder) checkAll() {
	if r.expect > 0 && !r.announced && len(r.done) >= r.expect {
		r.announced = true
		send(map[string]any{"ev": "all", "at": nowUs(), "reconciles": r.reconciles})
	}
}

func (r *Recorder) command(cmd map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch cmd["cmd"] {
	case "expect":
		r.expect = int(cmd["n"].(float64))
		r.announced = false
		r.checkAll()
	case "mark":
		r.reconciles = 0
		r.latencies = nil
		r.done = map[string]struct{}{}
		r.expect = 0
		send(map[string]any{"ev": "marked", "cpuUs": cpuUs(), "at": nowUs()})
	case "stats":
		gc, _ := cmd["gc"].(bool)
		m := memory(gc)
		m["ev"] = "stats"
		m["cpuUs"] = cpuUs()
		m["at"] = nowUs()
		m["reconciles"] = r.reconciles
		m["inFlight"] = r.inFlight
		m["latUs"] = r.latencies
		send(m)
	}
}

// ---- the reconciler ----

type WidgetReconciler struct {
	client.Client
	rec *Recorder
}

func (w *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	startedAt := nowUs()
	var widget Widget
	if err := w.Get(ctx, req.NamespacedName, &widget); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	w.rec.start(req.String(), widget.Annotations[writtenAtAnnotation], startedAt)
	ok := false
	defer func() { w.rec.finish(req.String(), ok) }()

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
	if err := w.Apply(ctx, child, client.FieldOwner("bench"), client.ForceOwnership); err != nil {
		return ctrl.Result{}, err
	}
	patch := fmt.Sprintf(`{"status":{"observedGeneration":%d,"phase":"Ready"}}`, widget.Generation)
	if err := w.Status().Patch(ctx, &widget, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("bench")); err != nil {
		return ctrl.Result{}, err
	}
	ok = true
	return ctrl.Result{}, nil
}

func main() {
	if os.Getenv("NESTOR_CHAOS") == "1" {
		runChaos() // bench/chaos.mjs: configured through the environment
		return
	}
	if os.Getenv("NESTOR_STARTUP") == "1" {
		runStartup() // bench/startup.mjs: configured through the environment
		return
	}
	// Its own flag set: controller-runtime registers -kubeconfig on the global one.
	flags := flag.NewFlagSet("bench-operator", flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig file")
	namespace := flags.String("namespace", "", "namespace to watch")
	mode := flags.String("mode", "reconcile", "sync | reconcile | webhook | memcached")
	workers := flags.Int("workers", 8, "MaxConcurrentReconciles")
	// Empty: controller-runtime's default, protobuf for built-in kinds (JSON for custom
	// resources); application/json shows what the wire format alone is worth.
	contentType := flags.String("content-type", "", "content type of requests and watches")
	syncKind := flags.String("sync-kind", "configmap", "sync mode: what the cache holds, configmap | widget")
	owns := flags.String("owns", "", "reconcile mode: configmap makes the controller own ConfigMaps (bench/run.mjs --scenarios owned)")
	certDir := flags.String("cert-dir", "", "webhook mode: directory of tls.crt and tls.key")
	host := flags.String("host", "127.0.0.1", "webhook mode: address to listen on")
	port := flags.Int("port", 0, "webhook mode: port (0: a free one)")
	http2 := flags.Bool("http2", false, "webhook mode: offer HTTP/2 (kubebuilder's --enable-http2)")
	webhookPort := flags.Int("webhook-port", 9443, "memcached mode: the webhook server's port")
	webhookCertDir := flags.String("webhook-cert-dir", "", "memcached mode: directory of tls.crt and tls.key")
	_ = flags.Parse(os.Args[1:])
	if *mode == "memcached" {
		runMemcached(*namespace, *webhookPort, *webhookCertDir) // bench/lib/chaos/conversion-restart.mjs; logs its own way
		return
	}
	ctrl.SetLogger(logr.Discard())
	if *mode == "webhook" {
		runWebhook(*certDir, *host, *port, *http2) // bench/lib/webhook-scenarios.mjs
		return
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	cfg.QPS = -1 // as controller-runtime's own config loader: no client-side rate limit
	cfg.UserAgent = "bench-controller-runtime"
	if *contentType != "" {
		cfg.ContentType = *contentType
		cfg.AcceptContentTypes = *contentType
	}

	scheme := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	scheme.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(scheme, widgetGV)
	cacheOptions := cache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]cache.Config{*namespace: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder()
	send(map[string]any{"ev": "hello", "pid": os.Getpid(), "runtime": runtime.Version()})

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

	switch *mode {
	case "sync":
		for cmd := range commands {
			switch cmd["cmd"] {
			case "start":
				before := memory(true)
				cpuBefore := cpuUs()
				started := nowUs()
				c, err := cache.New(cfg, cacheOptions)
				if err != nil {
					fail(err)
				}
				var object client.Object = &corev1.ConfigMap{}
				var list client.ObjectList = &corev1.ConfigMapList{}
				if *syncKind == "widget" {
					object, list = &Widget{}, &WidgetList{}
				}
				if _, err := c.GetInformer(ctx, object); err != nil {
					fail(err)
				}
				go func() { _ = c.Start(ctx) }()
				if !c.WaitForCacheSync(ctx) {
					fail(fmt.Errorf("cache did not sync"))
				}
				synced := nowUs()
				cpuAfter := cpuUs()
				after := memory(true)
				if err := c.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
					fail(err)
				}
				send(map[string]any{"ev": "synced", "objects": meta.LenList(list), "syncUs": synced - started,
					"cpuUs": cpuAfter - cpuBefore, "before": before, "after": after})
			case "stats":
				rec.command(cmd)
			case "exit":
				os.Exit(0)
			}
		}
	case "reconcile":
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{
			Scheme:                 scheme,
			Cache:                  cacheOptions,
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			LeaderElection:         false,
		})
		if err != nil {
			fail(err)
		}
		b := ctrl.NewControllerManagedBy(mgr).
			For(&Widget{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			WithOptions(controller.Options{MaxConcurrentReconciles: *workers})
		if *owns == "configmap" {
			b = b.Owns(&corev1.ConfigMap{}) // its reconcile never reads them: cached all the same
		}
		err = b.Complete(&WidgetReconciler{Client: mgr.GetClient(), rec: rec})
		if err != nil {
			fail(err)
		}
		go func() {
			if err := mgr.Start(ctx); err != nil {
				fail(err)
			}
		}()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			fail(fmt.Errorf("cache did not sync"))
		}
		send(map[string]any{"ev": "ready", "at": nowUs()})
		for cmd := range commands {
			if cmd["cmd"] == "exit" {
				cancel()
				os.Exit(0)
			}
			rec.command(cmd)
		}
	default:
		fail(fmt.Errorf("unknown mode %q", *mode))
	}
}

func fail(err error) {
	send(map[string]any{"ev": "error", "message": err.Error()})
	os.Exit(1)
}
