package runner

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// Defaults of Processes' limits.
const (
	// DefaultMaxPoolsPerNamespace is how many runners one namespace may run at once.
	DefaultMaxPoolsPerNamespace = 4
	// DefaultIdleTTL is how long a runner without runs lives.
	DefaultIdleTTL = 15 * time.Minute
)

// ReasonPoolLimit is the Synced reason of a resource whose pool may not start because
// its namespace runs as many runners as it may.
const ReasonPoolLimit = "RunnerPoolLimit"

// geteuid is this process's effective uid (a variable for the tests).
var geteuid = os.Geteuid

// SharedUIDError refuses runner processes that could not be kept apart: this process
// is not root, so every runner would run as its uid, and a module of one pool could
// read another pool's token, directory and warm providers' environment.
type SharedUIDError struct {
	// UID is this process's uid.
	UID int
}

// Error says why and what to do.
func (e *SharedUIDError) Error() string {
	return fmt.Sprintf("runner processes need root to run each pool under a uid of its own; as uid %d every runner would run as uid %d, and a module of one pool could read another pool's token and files: run the controller as root, use --runner deployment, or accept that with --runner-insecure-shared-uid", e.UID, e.UID)
}

// Check refuses runners this process could not keep apart (it is not root, and
// SharedUID does not accept that), and logs a warning when SharedUID accepts it.
func (p *Processes) Check() error {
	euid := geteuid()
	if euid == 0 {
		return nil
	}
	if !p.SharedUID {
		return &SharedUIDError{UID: euid}
	}
	p.Log.Info("WARNING: runner processes all run as this process's uid, so pools are not kept apart: a module of one pool can read another pool's token, directory and warm providers' environment (--runner-insecure-shared-uid); run as root or use --runner deployment to keep them apart", "uid", euid)
	return nil
}

// maxPools is the cap on one namespace's running runners; less than 0 for none.
func (p *Processes) maxPools() int { return maxPoolsOr(p.MaxPoolsPerNamespace) }

// idleTTL is how long a runner without runs lives; 0 for ever.
func (p *Processes) idleTTL() time.Duration {
	switch {
	case p.IdleTTL == 0:
		return DefaultIdleTTL
	case p.IdleTTL < 0:
		return 0
	}
	return p.IdleTTL
}

// admit refuses to start pool's runner while its namespace runs as many others as it
// may: the resource is Synced=False (ReasonPoolLimit) until one of them stops.
func (p *Processes) admit(pool PoolRef) error {
	var others []string
	for ref, proc := range p.running {
		if ref.Namespace == pool.Namespace && ref != pool && proc.alive() {
			others = append(others, ref.Name)
		}
	}
	return poolLimit(pool, others, p.maxPools(), p.idleTTL())
}

// poolLimit refuses to start pool's runner when others, the pools whose runners its
// namespace runs now, are as many as limit (less than 0: no cap), saying when one stops
// by itself (after ttl without runs; 0: never).
func poolLimit(pool PoolRef, others []string, limit int, ttl time.Duration) error {
	if limit < 0 || len(others) < limit {
		return nil
	}
	sort.Strings(others)
	when := "once one of them stops"
	if ttl > 0 {
		when = fmt.Sprintf("once one of them has had no run for %s", ttl)
	}
	return resource.UserErrorf(ReasonPoolLimit,
		"namespace %s runs %d runner pools (%s), the most it may (the controller's --runner-max-pools-per-namespace): pool %s starts %s; use one of those pools (spec.runnerPool), or ask an admin to raise the limit",
		pool.Namespace, len(others), strings.Join(others, ", "), pool.Name, when)
}

// maxPoolsOr is limit as the MaxPoolsPerNamespace fields read it: 0 for the default.
func maxPoolsOr(limit int) int {
	if limit == 0 {
		return DefaultMaxPoolsPerNamespace
	}
	return limit
}

// startReaper starts stopping idle runners, once; p.mu is held.
func (p *Processes) startReaper() {
	ttl := p.idleTTL()
	if p.reaper != nil || ttl <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.reaper = cancel
	every := max(min(ttl/4, 30*time.Second), 100*time.Millisecond)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				p.reapIdle(now)
			}
		}
	}()
}

// reapIdle stops the runners that have had no run for the idle TTL: their pools' next
// runs start them again.
func (p *Processes) reapIdle(now time.Time) {
	ttl := p.idleTTL()
	p.mu.Lock()
	defer p.mu.Unlock()
	for pool, proc := range p.running {
		if !proc.alive() || !proc.client.idle(now, ttl) {
			continue
		}
		delete(p.running, pool)
		if p.stopping == nil {
			p.stopping = map[PoolRef]*process{}
		}
		p.stopping[pool] = proc
		p.Log.Info("stopping an idle runner", "pool", pool.String(), "idle", ttl.String())
		proc.stop()
	}
}

// awaitStopped waits until pool's runner stopped by the reaper has exited, so that two
// runners never share the pool's directory; p.mu is held.
func (p *Processes) awaitStopped(ctx context.Context, pool PoolRef) error {
	proc := p.stopping[pool]
	if proc == nil {
		return nil
	}
	select {
	case <-proc.exited:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(engine.DefaultGracePeriod + 15*time.Second):
		_ = proc.cmd.Process.Kill()
		<-proc.exited
	}
	delete(p.stopping, pool)
	return nil
}
