// Package v1alpha1 holds the Azure storage kinds: StorageAccountClass and StorageAccount.
// +kubebuilder:object:generate=true
// +groupName=storage.azure.terraplane.io
package v1alpha1
