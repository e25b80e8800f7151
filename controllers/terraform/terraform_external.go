package terraform

import (
	"context"
	"time"

	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/resource"
)

// Connect resolves mg's Provider and module and renders its workspace.
func (r *connector) Connect(ctx context.Context, mg resource.Managed) (managed.External, error) {
	ws, err := r.render.Render(ctx, mg)
	if err != nil {
		return nil, err
	}
	return &run{t: r, rendered: ws}, nil
}

// Observe says whether terraform must run (see due and policiesChanged); a resource that needs no run is
// settled until the drift interval, and a lock a killed run left on it is released.
func (e *run) Observe(ctx context.Context, mg resource.Managed) (managed.Observation, error) {
	due, wait := e.t.due(mg, e.rendered.Hash)
	if due || e.t.policiesChanged(ctx, mg) {
		return managed.Observation{}, nil
	}
	if !e.t.locks.known(mg.GetUID(), time.Now()) {
		e.t.releaseStaleLock(ctx, mg)
	}
	return managed.Observation{UpToDate: true, Settled: true, RequeueAfter: wait}, nil
}

// Report records what terraform did in status.terraform, Drifted and events.
func (e *run) Report(mg resource.Managed, gen int64, o resource.Outcome) bool {
	e.t.recordRun(mg, e.out, gen, o.Succeeded())
	return e.out.ran
}

// Progress keeps the function that writes mg's status in the middle of the run.
func (e *run) Progress(write func(ctx context.Context) error) { e.progress = write }

// Missing says which objects the run found deleted outside Terraform and did not
// recreate: its plan's, unless it applied it.
func (e *run) Missing() string {
	if e.out.plan == nil || len(e.out.plan.Gone) == 0 || e.out.applied != nil {
		return ""
	}
	return goneMessage(e.out.plan, "not recreated yet")
}

var (
	_ managed.Reporter    = (*run)(nil)
	_ managed.Absence     = (*run)(nil)
	_ managed.Progressing = (*run)(nil)
)
