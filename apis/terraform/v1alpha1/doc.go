// Package v1alpha1 holds generic Terraform: ProviderConfig (any Terraform provider),
// ModuleClass (any Terraform module used as a class), Module (its managed resource), and
// Plan, the readable plan of any Terraform managed resource, for reviewers.
// +kubebuilder:object:generate=true
// +groupName=terraform.terraplane.io
package v1alpha1
