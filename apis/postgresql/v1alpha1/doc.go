// Package v1alpha1 holds the postgresql.terraplane.io Provider: an existing PostgreSQL server that
// databases and roles are made on.
// +kubebuilder:object:generate=true
// +groupName=postgresql.terraplane.io
package v1alpha1
