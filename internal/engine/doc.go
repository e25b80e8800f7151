// Package engine drives the terraform (or OpenTofu) binary for many workspaces: it finds it
// with hc-install, writes rendered workspaces, runs init only when the configuration changed,
// and runs plan/apply/destroy/output through terraform-exec with deadlines, a global
// concurrency cap and SIGINT on cancel. It has no Kubernetes imports.
package engine
