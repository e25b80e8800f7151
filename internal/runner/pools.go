package runner

import (
	"context"
	"fmt"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/statelock"
)

// DefaultPool is the pool of a workspace that names none.
const DefaultPool = "default"

// PoolRef names a runner pool: the namespace it serves and its name there.
type PoolRef struct {
	Namespace, Name string
}

// String is namespace/name.
func (p PoolRef) String() string { return p.Namespace + "/" + p.Name }

// PoolOf is the pool that runs ws: its Pool in the namespace of its state.
func PoolOf(ws engine.Workspace) PoolRef {
	name := ws.Pool
	if name == "" {
		name = DefaultPool
	}
	return PoolRef{Namespace: ws.BackendConfig["namespace"], Name: name}
}

// Launcher starts the runner of a pool, or finds it running, and returns a client of it.
type Launcher interface {
	// Launch returns a client of pool's runner, starting the runner if needed.
	Launch(ctx context.Context, pool PoolRef) (*Client, error)
	// Running returns a client of pool's runner when one is up, without starting one or
	// counting a run (which would keep it from going idle); nil when none is.
	Running(pool PoolRef) *Client
	// Forget says the runner of pool failed to answer: the next Launch checks it.
	Forget(pool PoolRef)
	// Stop stops every runner.
	Stop()
}

// Pools is the Runner that sends each run to the runner of its workspace's pool.
type Pools struct {
	// Launcher starts and finds the runners.
	Launcher Launcher
}

// client is the runner of ws's pool.
func (p *Pools) client(ctx context.Context, ws engine.Workspace) (*Client, PoolRef, error) {
	pool := PoolOf(ws)
	if pool.Namespace == "" {
		return nil, pool, fmt.Errorf("workspace %s names no namespace, so no runner pool", ws.ID)
	}
	c, err := p.Launcher.Launch(ctx, pool)
	if err != nil {
		return nil, pool, fmt.Errorf("runner pool %s: %w", pool, err)
	}
	return c, pool, nil
}

// forgetIfGone tells the launcher when a call could not reach the pool's runner.
func (p *Pools) forgetIfGone(pool PoolRef, err error) error {
	if err != nil && unreachable(err) {
		p.Launcher.Forget(pool)
	}
	return err
}

// Create makes a workspace's resources with one combined plan-and-apply.
func (p *Pools) Create(ctx context.Context, ws engine.Workspace) (engine.Result, error) {
	c, pool, err := p.client(ctx, ws)
	if err != nil {
		return engine.Result{}, err
	}
	res, err := c.Create(ctx, ws)
	return res, p.forgetIfGone(pool, err)
}

// Plan makes and saves a plan.
func (p *Pools) Plan(ctx context.Context, ws engine.Workspace, opts engine.PlanOptions) (*engine.Plan, error) {
	c, pool, err := p.client(ctx, ws)
	if err != nil {
		return nil, err
	}
	plan, err := c.Plan(ctx, ws, opts)
	return plan, p.forgetIfGone(pool, err)
}

// ApplyPlan applies a saved plan exactly.
func (p *Pools) ApplyPlan(ctx context.Context, ws engine.Workspace, plan *engine.Plan) (engine.Result, error) {
	c, pool, err := p.client(ctx, ws)
	if err != nil {
		return engine.Result{}, err
	}
	res, err := c.ApplyPlan(ctx, ws, plan)
	return res, p.forgetIfGone(pool, err)
}

// Outputs reads the outputs.
func (p *Pools) Outputs(ctx context.Context, ws engine.Workspace) (map[string]engine.Output, error) {
	c, pool, err := p.client(ctx, ws)
	if err != nil {
		return nil, err
	}
	out, err := c.Outputs(ctx, ws)
	return out, p.forgetIfGone(pool, err)
}

// Destroy destroys everything in the workspace's state.
func (p *Pools) Destroy(ctx context.Context, ws engine.Workspace) error {
	c, pool, err := p.client(ctx, ws)
	if err != nil {
		return err
	}
	return p.forgetIfGone(pool, c.Destroy(ctx, ws))
}

// PullState reads the workspace's state.
func (p *Pools) PullState(ctx context.Context, ws engine.Workspace) (string, error) {
	c, pool, err := p.client(ctx, ws)
	if err != nil {
		return "", err
	}
	state, err := c.PullState(ctx, ws)
	return state, p.forgetIfGone(pool, err)
}

// ClearStaleLock releases the workspace's state lock when its holder is provably gone
// (Local.ClearStaleLock).
func (p *Pools) ClearStaleLock(ctx context.Context, ws engine.Workspace, recorded bool) (statelock.Released, error) {
	c, pool, err := p.client(ctx, ws)
	if err != nil {
		return statelock.Released{}, err
	}
	rel, err := c.ClearStaleLock(ctx, ws, recorded)
	return rel, p.forgetIfGone(pool, err)
}

// Remove deletes the workspace's directory.
func (p *Pools) Remove(ctx context.Context, ws engine.Workspace) error {
	c, pool, err := p.client(ctx, ws)
	if err != nil {
		return err
	}
	return p.forgetIfGone(pool, c.Remove(ctx, ws))
}

// Stop stops every runner.
func (p *Pools) Stop() { p.Launcher.Stop() }

// Activity is what terraform is doing now in the workspace, in its pool's runner; the
// zero Activity when no runner of the pool is up. Asking starts no runner and keeps
// none from going idle.
func (p *Pools) Activity(ctx context.Context, ws engine.Workspace) (engine.Activity, error) {
	c := p.Launcher.Running(PoolOf(ws))
	if c == nil {
		return engine.Activity{}, nil
	}
	return c.Activity(ctx, ws)
}
