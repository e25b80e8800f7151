// Package v1alpha1 holds the aws.terraplane.io Provider: where and as whom the
// hashicorp/aws Terraform provider runs.
// +kubebuilder:object:generate=true
// +groupName=aws.terraplane.io
package v1alpha1
