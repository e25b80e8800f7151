package terraform

import (
	"context"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// Runner runs terraform for workspaces: the engine, or a stand-in in unit tests.
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
	// Busy reports whether a run is in flight for the workspace id.
	Busy(id string) bool
	// Remove deletes the workspace directory.
	Remove(id string) error
}

// Renderer turns a managed resource into its workspace: the workspace renderer, or a
// stand-in in unit tests.
type Renderer interface {
	// Render resolves mg's Provider and module and renders its workspace.
	Render(ctx context.Context, mg resource.Managed) (*workspace.Rendered, error)
}

var _ Runner = (*engine.Engine)(nil)
