package main

// The controller-runtime peer of the webhook benchmark (bench/webhooks.mjs): a webhook.Server
// serving the Widget's validating webhook (a typed admission.Validator, what
// ctrl.NewWebhookManagedBy(mgr, &Widget{}).WithValidator registers), its defaulting webhook
// (an admission.Defaulter, for the attack suite bench/attack.mjs) and the conversion webhook
// of a two-version Widget (conversion.Hub / conversion.Convertible), TLS from -cert-dir as
// kubebuilder's main.go sets it up (HTTP/2 off, its default flag; -http2 turns it on). The same line protocol as
// the operator modes: hello, ready {port}, stats {cpuUs, rss, maxRss, reviews, conversions, connections}, exit.
//
//	bench-operator -mode webhook -cert-dir DIR [-host 127.0.0.1] [-port 0]

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// The rule both peers enforce (bench/lib/webhook-load.mjs holds the Nestor side): a size
// quota, a warning above half of it, and a round that never goes back.
const (
	maxWidgetSize  = 100
	warnWidgetSize = 50
)

// WidgetValidator is the kubebuilder-style validator of the benchmark's Widget.
type WidgetValidator struct{}

func (WidgetValidator) ValidateCreate(_ context.Context, w *Widget) (admission.Warnings, error) {
	return checkWidgetSize(w)
}

func (WidgetValidator) ValidateUpdate(_ context.Context, old, w *Widget) (admission.Warnings, error) {
	if w.Spec.Round < old.Spec.Round {
		return nil, invalid(fmt.Sprintf("spec.round may not go back from %d to %d", old.Spec.Round, w.Spec.Round))
	}
	return checkWidgetSize(w)
}

func (WidgetValidator) ValidateDelete(context.Context, *Widget) (admission.Warnings, error) {
	return nil, nil
}

func checkWidgetSize(w *Widget) (admission.Warnings, error) {
	if w.Spec.Size > maxWidgetSize {
		return nil, invalid(fmt.Sprintf("spec.size %d exceeds the quota of %d", w.Spec.Size, maxWidgetSize))
	}
	if w.Spec.Size > warnWidgetSize {
		return admission.Warnings{fmt.Sprintf("spec.size %d is more than half the quota", w.Spec.Size)}, nil
	}
	return nil, nil
}

// WidgetDefaulter is the kubebuilder-style defaulter of the Widget (the attack suite's
// mutating path, bench/attack.mjs): a Widget without a size gets size 1, as Nestor's @Default.
type WidgetDefaulter struct{}

func (WidgetDefaulter) Default(_ context.Context, w *Widget) error {
	if w.Spec.Size == 0 {
		w.Spec.Size = defaultWidgetSize
	}
	return nil
}

const defaultWidgetSize = 1

// invalid is a 422 Invalid denial, as Nestor's AdmissionDenied(message, {code: 422, reason: 'Invalid'}).
func invalid(message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: message,
	}}
}

// ---- the two-version Widget of the conversion case: conversion.bench.nestor.dev ----

var (
	convV1 = schema.GroupVersion{Group: "conversion.bench.nestor.dev", Version: "v1"}
	convV2 = schema.GroupVersion{Group: "conversion.bench.nestor.dev", Version: "v2"}
)

// WidgetV1 is the hub (the stored version): spec.size.
type WidgetV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetV1Spec `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetV1Spec struct {
	Size        int64  `json:"size"`
	Round       int64  `json:"round,omitempty"`
	Description string `json:"description,omitempty"`
}

// WidgetV2 renames size to replicas.
type WidgetV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetV2Spec `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetV2Spec struct {
	Replicas    int64  `json:"replicas"`
	Round       int64  `json:"round,omitempty"`
	Description string `json:"description,omitempty"`
}

func (*WidgetV1) Hub() {}

func (w *WidgetV2) ConvertTo(dst conversion.Hub) error {
	hub := dst.(*WidgetV1)
	hub.ObjectMeta = w.ObjectMeta
	hub.Spec = WidgetV1Spec{Size: w.Spec.Replicas, Round: w.Spec.Round, Description: w.Spec.Description}
	hub.Status = w.Status
	return nil
}

func (w *WidgetV2) ConvertFrom(src conversion.Hub) error {
	hub := src.(*WidgetV1)
	w.ObjectMeta = hub.ObjectMeta
	w.Spec = WidgetV2Spec{Replicas: hub.Spec.Size, Round: hub.Spec.Round, Description: hub.Spec.Description}
	w.Status = hub.Status
	return nil
}

func (in *WidgetV1) DeepCopyObject() kruntime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (in *WidgetV2) DeepCopyObject() kruntime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// counted counts the reviews a handler answered and, for conversion, the objects in them.
type counted struct {
	next    http.Handler
	reviews atomic.Int64
}

func (c *counted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.next.ServeHTTP(w, r)
	c.reviews.Add(1)
}

var handshakes atomic.Int64

func runWebhook(certDir, host string, port int, http2 bool) {
	scheme := kruntime.NewScheme()
	scheme.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(scheme, widgetGV)
	scheme.AddKnownTypeWithName(convV1.WithKind("Widget"), &WidgetV1{})
	scheme.AddKnownTypeWithName(convV2.WithKind("Widget"), &WidgetV2{})
	metav1.AddToGroupVersion(scheme, convV1)
	metav1.AddToGroupVersion(scheme, convV2)

	// A free port chosen here, so the parent learns it before the server starts.
	if port == 0 {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			fail(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	server := webhook.NewServer(webhook.Options{
		Host:    host,
		Port:    port,
		CertDir: certDir,
		// kubebuilder's scaffold: HTTP/2 off unless --enable-http2.
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			if !http2 {
				c.NextProtos = []string{"http/1.1"}
			}
			// Counts TLS handshakes (new connections); nil keeps this config.
			c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
				handshakes.Add(1)
				return nil, nil
			}
		}},
	})
	validating := &counted{next: admission.WithValidator[*Widget](scheme, WidgetValidator{})}
	defaulting := &counted{next: admission.WithDefaulter[*Widget](scheme, WidgetDefaulter{})}
	converting := &counted{next: crconversion.NewWebhookHandler(scheme, crconversion.NewRegistry())}
	// The path ctrl.NewWebhookManagedBy generates for bench.nestor.dev/v1 Widget.
	server.Register("/validate-bench-nestor-dev-v1-widget", validating)
	server.Register("/mutate-bench-nestor-dev-v1-widget", defaulting)
	server.Register("/convert", converting)

	ctx, cancel := context.WithCancel(ctrl.SetupSignalHandler())
	defer cancel()
	send(map[string]any{"ev": "hello", "pid": os.Getpid(), "runtime": runtime.Version()})
	go func() {
		if err := server.Start(ctx); err != nil {
			fail(err)
		}
	}()
	if err := waitListening(host, port); err != nil {
		fail(err)
	}
	send(map[string]any{"ev": "ready", "at": nowUs(), "port": port})

	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		var cmd map[string]any
		if json.Unmarshal(scanner.Bytes(), &cmd) != nil {
			continue
		}
		switch cmd["cmd"] {
		case "stats":
			gc, _ := cmd["gc"].(bool)
			m := memory(gc)
			m["ev"] = "stats"
			m["cpuUs"] = cpuUs()
			m["at"] = nowUs()
			m["reviews"] = validating.reviews.Load() + defaulting.reviews.Load()
			m["conversions"] = converting.reviews.Load()
			m["connections"] = handshakes.Load()
			send(m)
		case "exit":
			cancel()
			os.Exit(0)
		}
	}
}

func waitListening(host string, port int) error {
	address := net.JoinHostPort(host, strconv.Itoa(port))
	for i := 0; i < 500; i++ {
		if conn, err := net.Dial("tcp", address); err == nil {
			conn.Close()
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("the webhook server did not listen on %s", address)
}
