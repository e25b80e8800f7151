package dynclaim

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// Object is a Claim or a Class: a typed view of an object of a defined kind.
type Object interface {
	client.Object
	// Unstructured returns an empty unstructured object of the same kind.
	Unstructured() *unstructured.Unstructured
	// reset empties the object before it is read into.
	reset()
}

// ClaimSpec is the spec of every defined claim kind: the shared claim fields and the
// kind's parameters.
type ClaimSpec struct {
	common.ClaimSpec `json:",inline"`
	// Parameters are the kind's own fields, validated by its CRD.
	Parameters *apiextensionsv1.JSON `json:"parameters,omitempty"`
}

// Claim is a claim of any defined kind.
type Claim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec of the claim.
	Spec ClaimSpec `json:"spec,omitempty"`
	// Status of the claim.
	Status common.ClaimStatus `json:"status,omitempty"`
}

// NewClaim returns an empty claim of kind gvk.
func NewClaim(gvk schema.GroupVersionKind) *Claim {
	c := &Claim{}
	c.SetGroupVersionKind(gvk)
	return c
}

// GetClaimSpec returns the shared claim spec.
func (c *Claim) GetClaimSpec() *common.ClaimSpec { return &c.Spec.ClaimSpec }

// GetClaimStatus returns the shared claim status.
func (c *Claim) GetClaimStatus() *common.ClaimStatus { return &c.Status }

// Parameters returns spec.parameters as a JSON-shaped value (empty when unset).
func (c *Claim) Parameters() (map[string]any, error) { return common.JSONValues(c.Spec.Parameters) }

// Unstructured returns an empty unstructured object of the claim's kind.
func (c *Claim) Unstructured() *unstructured.Unstructured { return empty(c.GroupVersionKind()) }

func (c *Claim) reset() { *c = Claim{TypeMeta: c.TypeMeta} }

// DeepCopyObject copies the claim.
func (c *Claim) DeepCopyObject() runtime.Object {
	out := &Claim{TypeMeta: c.TypeMeta}
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	c.Spec.ClaimSpec.DeepCopyInto(&out.Spec.ClaimSpec)
	out.Spec.Parameters = c.Spec.Parameters.DeepCopy()
	c.Status.DeepCopyInto(&out.Status)
	return out
}

// Class is a portable class of any defined kind.
type Class struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// ClassRef is the non-portable class.
	ClassRef common.ClassReference `json:"classRef"`
	// BindingMode says when claims are provisioned.
	BindingMode common.BindingMode `json:"bindingMode,omitempty"`
}

// NewClass returns an empty portable class of kind gvk.
func NewClass(gvk schema.GroupVersionKind) *Class {
	c := &Class{}
	c.SetGroupVersionKind(gvk)
	return c
}

// GetClassRef returns the non-portable class.
func (c *Class) GetClassRef() common.ClassReference { return c.ClassRef }

// GetBindingMode returns when claims of this class are provisioned; Immediate when unset.
func (c *Class) GetBindingMode() common.BindingMode {
	if c.BindingMode == "" {
		return common.BindingImmediate
	}
	return c.BindingMode
}

// Unstructured returns an empty unstructured object of the class's kind.
func (c *Class) Unstructured() *unstructured.Unstructured { return empty(c.GroupVersionKind()) }

func (c *Class) reset() { *c = Class{TypeMeta: c.TypeMeta} }

// DeepCopyObject copies the class.
func (c *Class) DeepCopyObject() runtime.Object {
	out := &Class{TypeMeta: c.TypeMeta, ClassRef: c.ClassRef, BindingMode: c.BindingMode}
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// NewList returns an empty unstructured list of the defined kind gvk, a claim's or a
// class's.
func NewList(gvk schema.GroupVersionKind) client.ObjectList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}

func empty(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}
