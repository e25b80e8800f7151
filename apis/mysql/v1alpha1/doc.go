// Package v1alpha1 holds the mysql.terraplane.io Provider: an existing MySQL server that
// databases and roles are made on.
// +kubebuilder:object:generate=true
// +groupName=mysql.terraplane.io
package v1alpha1
