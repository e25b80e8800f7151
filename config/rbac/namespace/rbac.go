// Package namespace holds the markers of the role the controller is granted in each
// namespace it serves (not cluster-wide): the Secrets it reads (Provider credentials,
// variables, module source credentials, kubeconfigs) and writes (connection Secrets,
// saved plans, and with the in-process runner Terraform state). `make generate` turns
// them into config/rbac/namespace/role.yaml (ClusterRole terraplane-namespace), which
// the Helm chart binds in the namespaces of tenancy.namespaces.
//
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
package namespace
