package terraform

import (
	"context"
	"fmt"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// run is the External of one Terraform resource for one reconcile, and the scope its
// steps work on: the resource, where it stands, its workspace, and what terraform did.
// The per-resource logic lives on it, one file per group of steps: lock.go, recover.go,
// plan.go, decide.go, apply.go, publish.go, and delete.go for a deletion.
type run struct {
	t *connector
	// mg is the resource, and sit where it stood when the reconcile connected.
	mg  resource.Managed
	sit situation
	// rendered is the workspace as Connect rendered it; ws is what runs, with the
	// recovery imports of an interrupted create added.
	rendered, ws *workspace.Rendered
	// imports are the recovery imports of an interrupted create still to try.
	imports []common.ImportInstruction
	// plan is the plan with changes the steps decide on and apply.
	plan *engine.Plan
	// staleTried is set once a saved plan went stale and was planned again.
	staleTried bool
	// recovered is set once an interrupted create is known to carry on: only then can
	// the run's outcome settle the create-pending record.
	recovered bool
	// rerun is set when an interrupted create recovers by running again (its module
	// converges), not by imports.
	rerun bool
	// creates is set once the run's apply is the resource's first create, which its state
	// lock records while it runs (markCreating).
	creates bool
	out     outcome
	// progress writes the resource's status in the middle of the run; nil writes none.
	progress func(ctx context.Context) error
}

// outcome is what one run did.
type outcome struct {
	// ran is true when terraform ran.
	ran bool
	// plan is the plan it made or applied; nil for a create without a saved plan.
	plan *engine.Plan
	// applied is what an apply did; nil when nothing was applied.
	applied *engine.Result
	// outputs to publish; nil leaves status.atProvider and the Secret as they are.
	outputs map[string]engine.Output
	// drift is a plan of drift that the management policies leave uncorrected.
	drift bool
	// lock is the dependency lock the resource now runs with: a plan's that found nothing
	// to change, or an apply's; nil leaves status.terraform.providerLock as it is.
	lock []byte
	// policies is what the plan policies said about plan; nil when none matched.
	policies *policyCheck
}

// newRun is the run of mg, standing where sit says, with the workspace Connect rendered
// (nil for a deletion, which renders only when it must).
func (r *connector) newRun(mg resource.Managed, ws *workspace.Rendered) *run {
	f := facts{driftInterval: r.driftInterval(mg), now: time.Now(), harmless: r.kind.Terraform.HarmlessReplacements}
	if ws != nil {
		f.hash = ws.Hash
	}
	return &run{t: r, mg: mg, sit: situate(mg, f), rendered: ws, ws: ws}
}

// workspace is the workspace the run's terraform commands run in, marked as a create's
// when the run creates.
func (e *run) workspace() engine.Workspace {
	ws := e.ws.Workspace
	ws.Creates = e.creates
	return ws
}

// next is what comes after a step.
type next int

const (
	// proceed goes on with the next step.
	proceed next = iota
	// finished ends the steps: there is nothing more to do.
	finished
	// replan asks the plan-and-apply steps to run again from their plan.
	replan
)

// step is one named step of a run.
type step struct {
	name string
	do   func(*run, context.Context) (next, error)
}

// applySteps are the steps of one Apply, in order; each enters one concern once, and any
// may end the Apply.
var applySteps = []step{
	{"clear stale lock", (*run).clearStaleLock},
	{"recover an interrupted create", (*run).recoverInterruptedCreate},
	{"create directly", (*run).createDirectly},
	{"plan and apply", (*run).planAndApply},
	{"keep the plan text", (*run).keepText},
}

// planSteps plan, decide and apply. They run again from the plan when a saved plan went
// stale, or a recovery import found nothing to import (see retryPlan).
var planSteps = []step{
	{"plan", (*run).makePlan},
	{"decide", (*run).decide},
	{"mark creating", (*run).markCreating},
	{"mark missing", (*run).markMissing},
	{"apply", (*run).apply},
}

// Apply runs applySteps, settles the create-pending record once the outcome is known,
// and returns what to publish and the record of the run, also when it failed.
func (e *run) Apply(ctx context.Context, _ resource.Managed) (managed.Applied, error) {
	e.out = outcome{ran: true}
	e.t.locks.forget(e.mg.GetUID()) // a run killed from here on may leave the lock held
	_, err := runSteps(e, ctx, applySteps)
	if e.recovered {
		err = e.settle(ctx, err)
	}
	e.recordLocks(ctx)
	if err != nil {
		return managed.Applied{Run: e.record()}, terraformError(err)
	}
	e.t.locks.free(e.mg.GetUID(), time.Now()) // the run ended, and released the lock itself
	details, err := e.publish(ctx)
	return managed.Applied{ConnectionDetails: details, Run: e.record()}, err
}

// runSteps runs steps in order until one finishes or fails, and says how they ended.
func runSteps(e *run, ctx context.Context, steps []step) (next, error) {
	for _, s := range steps {
		n, err := s.do(e, ctx)
		if err != nil || n != proceed {
			return n, err
		}
	}
	return proceed, nil
}

// planAndApply runs planSteps, again from the plan while they ask to (retryPlan).
func (e *run) planAndApply(ctx context.Context) (next, error) {
	return e.retryPlan(ctx, planSteps)
}

// retryPlan runs steps, and runs them again when one asks to plan again or fails on
// recovery imports with nothing to import; the retries are bounded by the imports there
// are.
func (e *run) retryPlan(ctx context.Context, steps []step) (next, error) {
	for budget := len(e.imports) + 2; ; budget-- {
		n, err := runSteps(e, ctx, steps)
		if err != nil {
			n, err = e.withoutMissingImports(ctx, err)
		}
		if n != replan || err != nil {
			return n, err
		}
		if budget == 0 {
			return finished, fmt.Errorf("%s: planned again too often", steps[0].name)
		}
	}
}
