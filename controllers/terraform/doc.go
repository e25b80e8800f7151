// Package terraform is the Terraform implementation of the managed reconciler's Connector
// (controllers/managed): for every registered Terraform kind it renders the resource into
// a Terraform workspace, plans it under change control and applies it, publishes outputs
// to status and the connection Secret, and destroys or retains it on deletion, with crash
// recovery of interrupted creates and stale state locks.
package terraform
