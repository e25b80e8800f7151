// Package v1alpha1 holds the PostgreSQL database kinds: DatabaseClass and Database (a role
// and a database it owns, on the server a postgresql.terraplane.io Provider names).
// +kubebuilder:object:generate=true
// +groupName=database.postgresql.terraplane.io
package v1alpha1
