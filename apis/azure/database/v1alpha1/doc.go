// Package v1alpha1 holds the Azure database kinds: PostgreSQLFlexibleServer and MySQLFlexibleServer and their classes.
// +kubebuilder:object:generate=true
// +groupName=database.azure.terraplane.io
package v1alpha1
