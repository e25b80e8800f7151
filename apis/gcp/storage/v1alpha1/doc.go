// Package v1alpha1 holds the GCP storage kinds: CloudStorageBucketClass and CloudStorageBucket.
// +kubebuilder:object:generate=true
// +groupName=storage.gcp.terraplane.io
package v1alpha1
