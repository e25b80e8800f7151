package runner

import (
	"context"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/statelock"
)

// Local runs terraform in this process: the engine, and the state locker that holds
// its workspaces' locks.
type Local struct {
	// Engine runs terraform.
	Engine *engine.Engine
	// Locker takes and releases the state locks.
	Locker *statelock.Locker
}

// Create makes a workspace's resources with one combined plan-and-apply.
func (l *Local) Create(ctx context.Context, ws engine.Workspace) (engine.Result, error) {
	return l.Engine.Create(ctx, ws)
}

// Plan makes and saves a plan.
func (l *Local) Plan(ctx context.Context, ws engine.Workspace, opts engine.PlanOptions) (*engine.Plan, error) {
	return l.Engine.Plan(ctx, ws, opts)
}

// ApplyPlan applies a saved plan exactly.
func (l *Local) ApplyPlan(ctx context.Context, ws engine.Workspace, plan *engine.Plan) (engine.Result, error) {
	return l.Engine.ApplyPlan(ctx, ws, plan)
}

// Outputs reads the outputs.
func (l *Local) Outputs(ctx context.Context, ws engine.Workspace) (map[string]engine.Output, error) {
	return l.Engine.Outputs(ctx, ws)
}

// Destroy destroys everything in the workspace's state.
func (l *Local) Destroy(ctx context.Context, ws engine.Workspace) error {
	return l.Engine.Destroy(ctx, ws)
}

// PullState reads the workspace's state.
func (l *Local) PullState(ctx context.Context, ws engine.Workspace) (string, error) {
	return l.Engine.PullState(ctx, ws)
}

// ClearStaleLock releases the workspace's state lock when its holder is provably gone,
// and says how long it had been held and whether it records a create whose outcome is
// unknown, which it drops once the resource records it (recorded).
func (l *Local) ClearStaleLock(ctx context.Context, ws engine.Workspace, recorded bool) (statelock.Released, error) {
	key := statelock.LeaseKey(ws.BackendConfig["namespace"], ws.BackendConfig["secret_suffix"])
	return l.Locker.ClearStale(ctx, key, l.Engine.Busy(ws.ID), recorded)
}

// Activity is what terraform is doing now in the workspace.
func (l *Local) Activity(_ context.Context, ws engine.Workspace) (engine.Activity, error) {
	return l.Engine.Activity(ws.ID), nil
}

// Remove deletes the workspace's directory.
func (l *Local) Remove(_ context.Context, ws engine.Workspace) error {
	return l.Engine.Remove(ws.ID)
}
