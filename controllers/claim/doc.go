// Package claim is the one claim reconciler: for every registered claim kind it writes
// the namespace's default class, provisions a managed resource dynamically or binds a
// static one, mirrors readiness, propagates the connection Secret, and honours the
// reclaim policy when the claim is deleted. A class that binds on first consumer places
// its claims through a Placement (controllers/scheduler's), so that this package needs
// no workload API.
package claim
