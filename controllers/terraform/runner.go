package terraform

import (
	"context"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/runner"
	"terraplane.io/terraplane/internal/statelock"
	"terraplane.io/terraplane/internal/workspace"
)

// Runner runs terraform for workspaces: the engine in this process, the runners of the
// workspaces' pools, or a stand-in in unit tests.
type Runner interface {
	// Create makes a workspace's resources with one combined plan-and-apply.
	Create(ctx context.Context, ws engine.Workspace) (engine.Result, error)
	// Plan makes and saves a plan.
	Plan(ctx context.Context, ws engine.Workspace, opts engine.PlanOptions) (*engine.Plan, error)
	// ApplyPlan applies a saved plan exactly.
	ApplyPlan(ctx context.Context, ws engine.Workspace, plan *engine.Plan) (engine.Result, error)
	// Outputs reads the outputs.
	Outputs(ctx context.Context, ws engine.Workspace) (map[string]engine.Output, error)
	// Destroy destroys everything in the workspace's state.
	Destroy(ctx context.Context, ws engine.Workspace) error
	// PullState reads the workspace's state.
	PullState(ctx context.Context, ws engine.Workspace) (string, error)
	// ClearStaleLock releases the workspace's state lock when its holder is provably
	// gone, and says how long it had been held and whether it records a create whose
	// outcome is unknown, a record it drops once the resource holds it (recorded); a lock
	// a live run holds is a *statelock.HeldError, one Terraplane did not take a
	// *statelock.StaleLockError.
	ClearStaleLock(ctx context.Context, ws engine.Workspace, recorded bool) (statelock.Released, error)
	// Remove deletes the workspace's directory.
	Remove(ctx context.Context, ws engine.Workspace) error
	// Activity is what terraform is doing now in the workspace: the command running and
	// its resource operations in flight.
	Activity(ctx context.Context, ws engine.Workspace) (engine.Activity, error)
}

// Renderer turns a managed resource into its workspace: the workspace renderer, or a
// stand-in in unit tests.
type Renderer interface {
	// Render resolves mg's Provider and module and renders its workspace.
	Render(ctx context.Context, mg resource.Managed) (*workspace.Rendered, error)
}

var (
	_ Runner = (*runner.Local)(nil)
	_ Runner = (*runner.Pools)(nil)
)
