// Package v1alpha1 holds workload.terraplane.io: KubernetesApplications scheduled to a
// target cluster and the KubernetesApplicationResources they submit there.
// +kubebuilder:object:generate=true
// +groupName=workload.terraplane.io
package v1alpha1
