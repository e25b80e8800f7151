// Package v1alpha1 holds the GCP compute kinds: GKEClusterClass and GKECluster.
// +kubebuilder:object:generate=true
// +groupName=compute.gcp.terraplane.io
package v1alpha1
