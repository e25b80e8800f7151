// Package v1alpha1 holds the gcp.terraplane.io Provider: the project, region and identity
// the hashicorp/google Terraform provider runs with.
// +kubebuilder:object:generate=true
// +groupName=gcp.terraplane.io
package v1alpha1
