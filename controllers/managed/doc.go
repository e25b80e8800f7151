// Package managed is the one managed-resource reconciler: for every registered managed
// kind it renders the resource into a Terraform workspace, plans and applies it, publishes
// outputs to status and the connection Secret, and destroys or retains it on deletion.
package managed
