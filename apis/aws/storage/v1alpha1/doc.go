// Package v1alpha1 holds the AWS storage kinds: S3BucketClass and S3Bucket.
// +kubebuilder:object:generate=true
// +groupName=storage.aws.terraplane.io
package v1alpha1
