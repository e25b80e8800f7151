package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ResourceStatus is the observed state of a managed resource that a Terraform module
// makes: the status every managed resource shares, and the module's non-sensitive outputs.
type ResourceStatus struct {
	ManagedStatus `json:",inline"`
	// AtProvider holds the module's non-sensitive outputs.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	AtProvider *apiextensionsv1.JSON `json:"atProvider,omitempty"`
}

// SetAtProvider records the non-sensitive outputs in atProvider.
func (s *ResourceStatus) SetAtProvider(outputs map[string]any) error {
	v, err := FromValues(outputs)
	s.AtProvider = v
	return err
}
