// Package v1alpha1 holds the portable database claims and their classes.
// +kubebuilder:object:generate=true
// +groupName=database.terraplane.io
package v1alpha1
