// Package v1alpha1 holds the portable storage claims: Bucket and BucketClass.
// +kubebuilder:object:generate=true
// +groupName=storage.terraplane.io
package v1alpha1
