package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SchemeBuilder registers one API group version's types with a scheme, using only
// apimachinery, so that API packages stay cheap to import.
// +kubebuilder:object:generate=false
type SchemeBuilder struct {
	runtime.SchemeBuilder
	// GroupVersion the registered types belong to.
	GroupVersion schema.GroupVersion
}

// NewSchemeBuilder returns a builder for the types of gv.
func NewSchemeBuilder(gv schema.GroupVersion) *SchemeBuilder {
	return &SchemeBuilder{GroupVersion: gv}
}

// Register adds objs, with the group version's list and option types, to the builder.
func (b *SchemeBuilder) Register(objs ...runtime.Object) {
	b.SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(b.GroupVersion, objs...)
		metav1.AddToGroupVersion(s, b.GroupVersion)
		return nil
	})
}
