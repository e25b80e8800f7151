// Package v1alpha1 holds generic Terraform: ProviderConfig (any Terraform provider),
// ModuleClass (any Terraform module used as a class) and Module (its managed resource).
// +kubebuilder:object:generate=true
// +groupName=terraform.terraplane.io
package v1alpha1
