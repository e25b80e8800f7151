// Package statelock reads and releases the state locks terraform's kubernetes backend
// keeps in Leases, the way `terraform force-unlock` does, and decides when a lock is stale.
package statelock
