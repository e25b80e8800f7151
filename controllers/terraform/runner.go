package terraform

import (
	"context"

	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/runner"
	"terraplane.io/terraplane/internal/workspace"
)

// Runner runs terraform for workspaces: the engine in this process, the runners of the
// workspaces' pools, or a stand-in in unit tests.
type Runner = runner.Runs

// Renderer turns a managed resource into its workspace: the workspace renderer, or a
// stand-in in unit tests.
type Renderer interface {
	// Render resolves mg's Provider and module and renders its workspace.
	Render(ctx context.Context, mg resource.Managed) (*workspace.Rendered, error)
}
