// Package v1alpha1 holds kubernetes.terraplane.io: the credentials of a target Kubernetes
// cluster that workloads and Kubernetes-native resources are submitted to.
// +kubebuilder:object:generate=true
// +groupName=kubernetes.terraplane.io
package v1alpha1
