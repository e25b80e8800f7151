package terraform

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"terraplane.io/terraplane/internal/workspace"
)

// clearStaleLock releases the resource's state lock when its holder is provably gone,
// and says how long it had been held. A lock a live run of another process holds is
// waited for; one Terraplane did not take is the user's to release. A create the lock
// records, cut off before its outcome was known, moves onto the resource.
func (e *run) clearStaleLock(ctx context.Context) (next, error) {
	rel, err := e.t.runner.ClearStaleLock(ctx, workspace.Ref(e.mg), e.sit.pending)
	if err != nil {
		return proceed, lockError(err)
	}
	if age := rel.Age; age > 0 {
		log.FromContext(ctx).Info("released a stale state lock", "resource", e.mg.GetName(), "heldFor", age.Round(time.Millisecond).String(),
			"releasedAt", time.Now().UTC().Format(time.RFC3339Nano))
		e.t.recorder.Eventf(e.mg, "Normal", "StateLockReleased", "released a state lock left by an interrupted run (held %s)", age.Round(time.Second))
	}
	if rel.CreatePending {
		return proceed, e.takeOverCreate(ctx) // a create was cut off: the recovery step reads its record
	}
	return proceed, nil
}

// releaseStaleLock releases a lock a killed run left on a resource that needs no run now
// (say, a drift plan killed after the resource had settled), so that nothing is left
// locked until the next drift check. A lock another host holds is left alone.
func (e *run) releaseStaleLock(ctx context.Context) {
	since, held := e.t.opts.Shards.HeldSince(e.mg.GetUID())
	if held && e.t.locks.known(e.mg.GetUID(), since) {
		return
	}
	if _, err := e.clearStaleLock(ctx); err != nil {
		log.FromContext(ctx).V(1).Info("state lock left in place", "reason", err.Error())
		return
	}
	e.t.locks.free(e.mg.GetUID(), time.Now())
}
