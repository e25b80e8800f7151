// Package v1alpha1 holds the MySQL database kinds: DatabaseClass and Database (a role
// and a database it owns, on the server a mysql.terraplane.io Provider names).
// +kubebuilder:object:generate=true
// +groupName=database.mysql.terraplane.io
package v1alpha1
