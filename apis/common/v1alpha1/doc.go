// Package v1alpha1 holds the types that every Terraplane claim, class, managed resource
// and provider shares: references, binding phases, reclaim policies and the small
// interfaces that let one reconciler serve every kind.
// +kubebuilder:object:generate=true
package v1alpha1
