// Package v1alpha1 holds the Azure compute kinds: AKSClusterClass and AKSCluster.
// +kubebuilder:object:generate=true
// +groupName=compute.azure.terraplane.io
package v1alpha1
