// Package v1alpha1 holds the stack manager's API: StackInstall and ClusterStackInstall
// (requests to install a stack package from an OCI registry) and Stack (the record of an
// installed stack, which the manager turns into a ServiceAccount, RBAC and a controller).
// +kubebuilder:object:generate=true
// +groupName=stacks.terraplane.io
package v1alpha1
