package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// GroupVersion is apiextensions.terraplane.io/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: "apiextensions.terraplane.io", Version: "v1alpha1"}

// ClaimDefinitionGroupVersionKind is the kind of ClaimDefinition.
var ClaimDefinitionGroupVersionKind = GroupVersion.WithKind("ClaimDefinition")

// SchemeBuilder registers this package's types.
var SchemeBuilder = common.NewSchemeBuilder(GroupVersion)

// AddToScheme adds this package's types to a scheme.
var AddToScheme = SchemeBuilder.AddToScheme

func init() {
	SchemeBuilder.Register(&ClaimDefinition{}, &ClaimDefinitionList{})
}
