// Package v1alpha1 holds the portable compute claims and their classes.
// +kubebuilder:object:generate=true
// +groupName=compute.terraplane.io
package v1alpha1
