package terraform

import (
	"context"

	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// run is the External of one Terraform resource for one reconcile: its rendered
// workspace, and what terraform did.
type run struct {
	t   *connector
	ws  *workspace.Rendered
	out outcome
}

// Connect resolves mg's Provider and module and renders its workspace.
func (r *connector) Connect(ctx context.Context, mg resource.Managed) (managed.External, error) {
	ws, err := r.render.Render(ctx, mg)
	if err != nil {
		return nil, err
	}
	return &run{t: r, ws: ws}, nil
}

// Observe says whether terraform must run (see due); a resource that needs no run is
// settled until the drift interval, and a lock a killed run left on it is released.
func (e *run) Observe(ctx context.Context, mg resource.Managed) (managed.Observation, error) {
	due, wait := e.t.due(mg, e.ws.Hash)
	if due {
		return managed.Observation{}, nil
	}
	e.t.releaseStaleLock(ctx, mg)
	return managed.Observation{UpToDate: true, Settled: true, RequeueAfter: wait}, nil
}

// Apply plans, lets change control decide and applies, safely after a crash (see
// guardedSync), and publishes the outputs: non-sensitive ones to status.atProvider, the
// connection keys to the connection details.
func (e *run) Apply(ctx context.Context, mg resource.Managed) (managed.Applied, error) {
	out, err := e.t.guardedSync(ctx, mg, e.ws)
	e.out = out
	if err != nil {
		return managed.Applied{}, terraformError(err)
	}
	details, err := e.t.publish(mg, e.ws, out)
	return managed.Applied{ConnectionDetails: details}, err
}

// Report records what terraform did in status.terraform, Drifted and events.
func (e *run) Report(mg resource.Managed, gen int64, o resource.Outcome) bool {
	e.t.recordRun(mg, e.out, gen, o.Succeeded())
	return e.out.ran
}

var _ managed.Reporter = (*run)(nil)
