// Package v1alpha1 holds the azure.terraplane.io Provider: the subscription, tenant,
// location and identity the hashicorp/azurerm Terraform provider runs with.
// +kubebuilder:object:generate=true
// +groupName=azure.terraplane.io
package v1alpha1
