// Package trace walks what a Terraplane object depends on, as `terraplane trace` prints
// it: a claim, its class chain, its managed resource, the resource's Provider and
// Secrets, its pending plan and its runner pool; a KubernetesApplication, its resources
// and its cluster; a ResourcePool, its members and the claims it filled. It reads with
// whatever rights the caller has: a node it may not read is shown as such, and the walk
// goes on. It also lists the plans awaiting approval (`get approvals`).
package trace
