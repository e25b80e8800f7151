// Package chaos is the fault-injection test: `terraplane controller` runs as its own
// process against a real API server and is SIGKILLed at random moments while Modules
// are created, updated and deleted; afterwards everything must converge with no stale
// lock, no duplicate create and no state lost. It also runs `terraplane unlock` as a user
// would.
package chaos
