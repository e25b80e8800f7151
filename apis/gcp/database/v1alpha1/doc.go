// Package v1alpha1 holds the GCP database kinds: CloudSQLInstanceClass and CloudSQLInstance.
// +kubebuilder:object:generate=true
// +groupName=database.gcp.terraplane.io
package v1alpha1
