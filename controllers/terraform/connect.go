package terraform

import (
	"context"

	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/resource"
)

// Connect renders mg's workspace (resolving its Provider and module) and returns the
// run of this reconcile, with where mg stands.
func (r *connector) Connect(ctx context.Context, mg resource.Managed) (managed.External, error) {
	ws, err := r.render.Render(ctx, mg)
	if err != nil {
		return nil, err
	}
	return r.newRun(mg, ws), nil
}

// Observe says whether terraform must run (the situation's due, or a plan held under
// policies that changed since); a resource that needs no run is settled until the drift
// interval, and a lock a killed run left on it is released.
func (e *run) Observe(ctx context.Context, _ resource.Managed) (managed.Observation, error) {
	if e.sit.due != dueNot || e.policiesChanged(ctx) {
		return managed.Observation{}, nil
	}
	e.releaseStaleLock(ctx)
	return managed.Observation{UpToDate: true, Settled: true, RequeueAfter: e.sit.wait}, nil
}

// Progress keeps the function that writes the resource's status in the middle of the run.
func (e *run) Progress(write func(ctx context.Context) error) { e.progress = write }

var _ managed.Progressing = (*run)(nil)
