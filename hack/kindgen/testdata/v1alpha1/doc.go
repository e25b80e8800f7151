// Package v1alpha1 is kindgen's test input.
// +kubebuilder:object:generate=true
// +groupName=widgets.example.terraplane.io
package v1alpha1
