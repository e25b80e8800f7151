package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// GroupVersion is scaling.terraplane.io/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: "scaling.terraplane.io", Version: "v1alpha1"}

// ResourcePoolGroupVersionKind is the ResourcePool kind.
var ResourcePoolGroupVersionKind = GroupVersion.WithKind("ResourcePool")

// SchemeBuilder registers this package's types.
var SchemeBuilder = common.NewSchemeBuilder(GroupVersion)

// AddToScheme adds this package's types to a scheme.
var AddToScheme = SchemeBuilder.AddToScheme

func init() {
	SchemeBuilder.Register(&ResourcePool{}, &ResourcePoolList{})
}
