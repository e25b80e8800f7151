// Package v1alpha1 holds the plan policies' API: PlanPolicy (cluster-scoped, written by
// admins) and NamespacedPlanPolicy (applying to the managed resources of its namespace and
// of the claims made there), whose CEL rules are checked on every Terraform plan before
// anything is applied.
// +kubebuilder:object:generate=true
// +groupName=policy.terraplane.io
package v1alpha1
