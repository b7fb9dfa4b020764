package main

// The sample operator's Memcached kind (sample-operator/src/memcached/memcached*.ts), typed as
// a kubebuilder project types it: cache.example.com v1alpha1 (spec.size, spec.containerPort),
// the hub the reconciler works on, and v1beta1 (spec.replicas), a spoke converted through
// the hub (conversion.Hub / conversion.Convertible, served at /convert).

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

var (
	cacheV1alpha1 = schema.GroupVersion{Group: "cache.example.com", Version: "v1alpha1"}
	cacheV1beta1  = schema.GroupVersion{Group: "cache.example.com", Version: "v1beta1"}
)

// containerPortAnnotation keeps the hub's spec.containerPort, which v1beta1 cannot hold,
// across a round trip through v1beta1 (the sample keeps it in nestor.dev/conversion-data).
const containerPortAnnotation = "cache.example.com/container-port"

type MemcachedSpec struct {
	Size          int32 `json:"size"`
	ContainerPort int32 `json:"containerPort,omitempty"`
}

type MemcachedStatus struct {
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	ReadyReplicas      int32              `json:"readyReplicas,omitempty"`
}

// Memcached is cache.example.com/v1alpha1, the hub.
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              MemcachedSpec   `json:"spec,omitempty"`
	Status            MemcachedStatus `json:"status,omitempty"`
}

type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}

type MemcachedSpecV1beta1 struct {
	Replicas int32 `json:"replicas"`
}

// MemcachedV1beta1 is cache.example.com/v1beta1.
type MemcachedV1beta1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              MemcachedSpecV1beta1 `json:"spec,omitempty"`
	Status            MemcachedStatus      `json:"status,omitempty"`
}

type MemcachedV1beta1List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MemcachedV1beta1 `json:"items"`
}

func addMemcachedToScheme(scheme *kruntime.Scheme) {
	scheme.AddKnownTypeWithName(cacheV1alpha1.WithKind("Memcached"), &Memcached{})
	scheme.AddKnownTypeWithName(cacheV1alpha1.WithKind("MemcachedList"), &MemcachedList{})
	scheme.AddKnownTypeWithName(cacheV1beta1.WithKind("Memcached"), &MemcachedV1beta1{})
	scheme.AddKnownTypeWithName(cacheV1beta1.WithKind("MemcachedList"), &MemcachedV1beta1List{})
	metav1.AddToGroupVersion(scheme, cacheV1alpha1)
	metav1.AddToGroupVersion(scheme, cacheV1beta1)
}

func (*Memcached) Hub() {}

func (m *MemcachedV1beta1) ConvertTo(dst conversion.Hub) error {
	hub := dst.(*Memcached)
	hub.ObjectMeta = *m.ObjectMeta.DeepCopy()
	hub.Spec = MemcachedSpec{Size: m.Spec.Replicas}
	if port, err := strconv.ParseInt(hub.Annotations[containerPortAnnotation], 10, 32); err == nil {
		hub.Spec.ContainerPort = int32(port)
	}
	delete(hub.Annotations, containerPortAnnotation)
	if len(hub.Annotations) == 0 {
		hub.Annotations = nil
	}
	hub.Status = *m.Status.DeepCopy()
	return nil
}

func (m *MemcachedV1beta1) ConvertFrom(src conversion.Hub) error {
	hub := src.(*Memcached)
	m.ObjectMeta = *hub.ObjectMeta.DeepCopy()
	m.Spec = MemcachedSpecV1beta1{Replicas: hub.Spec.Size}
	if hub.Spec.ContainerPort != 0 {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[containerPortAnnotation] = strconv.Itoa(int(hub.Spec.ContainerPort))
	}
	m.Status = *hub.Status.DeepCopy()
	return nil
}

// ---- deep copies (what controller-gen writes into zz_generated.deepcopy.go) ----

func (in *MemcachedStatus) DeepCopy() *MemcachedStatus {
	out := *in
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	return &out
}

func (in *Memcached) DeepCopyInto(out *Memcached) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status = *in.Status.DeepCopy()
}

func (in *Memcached) DeepCopy() *Memcached {
	out := new(Memcached)
	in.DeepCopyInto(out)
	return out
}

func (in *Memcached) DeepCopyObject() kruntime.Object { return in.DeepCopy() }

func (in *MemcachedList) DeepCopyObject() kruntime.Object {
	out := &MemcachedList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Memcached, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

func (in *MemcachedV1beta1) DeepCopyInto(out *MemcachedV1beta1) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status = *in.Status.DeepCopy()
}

func (in *MemcachedV1beta1) DeepCopyObject() kruntime.Object {
	out := new(MemcachedV1beta1)
	in.DeepCopyInto(out)
	return out
}

func (in *MemcachedV1beta1List) DeepCopyObject() kruntime.Object {
	out := &MemcachedV1beta1List{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]MemcachedV1beta1, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
