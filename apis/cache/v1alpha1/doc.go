// Package v1alpha1 holds the portable cache claims and their classes.
// +kubebuilder:object:generate=true
// +groupName=cache.terraplane.io
package v1alpha1
