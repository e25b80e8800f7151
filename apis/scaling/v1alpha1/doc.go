// Package v1alpha1 holds the scaling API: ResourcePool, a namespaced set of ready claims
// of any claim kind, made from a template and handed out to claims that name the pool in
// spec.poolRef.
// +kubebuilder:object:generate=true
// +groupName=scaling.terraplane.io
package v1alpha1
