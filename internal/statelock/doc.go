// Package statelock takes, reads and releases the state locks of terraform's kubernetes
// backend in its format (a Lease, or the state Secret for a workspace's first lock), the
// way `terraform force-unlock` does, and decides when a lock is stale.
package statelock
