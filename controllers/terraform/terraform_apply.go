package terraform

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// run is the External of one Terraform resource for one reconcile, and the scope its
// Apply's steps work on: the resource, its workspace, and what terraform did.
type run struct {
	t *connector
	// rendered is the workspace as Connect rendered it; ws is what runs, with the
	// recovery imports of an interrupted create added.
	rendered, ws *workspace.Rendered
	mg           resource.Managed
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
	out   outcome
	// progress writes the resource's status in the middle of the run; nil writes none.
	progress func(ctx context.Context) error
}

// next is what comes after a step.
type next int

const (
	// proceed goes on with the next step.
	proceed next = iota
	// finished ends the Apply: there is nothing more to do.
	finished
	// replan goes back to the plan step.
	replan
)

// step is one named step of Apply.
type step struct {
	name string
	do   func(*run, context.Context) (next, error)
}

// applySteps are the steps of one Apply, in order. Each step enters one concern once;
// a step may end the Apply, or send it back to plan (a saved plan gone stale, or a
// recovery import that found nothing to import).
var applySteps = []step{
	{"clear stale lock", (*run).clearStaleLock},
	{"recover an interrupted create", (*run).recoverInterruptedCreate},
	{"create directly", (*run).createDirectly},
	{"plan", (*run).makePlan},
	{"decide", (*run).decide},
	{"mark creating", (*run).markCreating},
	{"mark missing", (*run).markMissing},
	{"apply", (*run).apply},
	{"keep the plan text", (*run).keepText},
}

// Apply runs applySteps, settles the create-pending record once the outcome is known,
// and publishes the outputs: non-sensitive ones to status.atProvider, the connection
// keys to the connection details.
func (e *run) Apply(ctx context.Context, mg resource.Managed) (managed.Applied, error) {
	e.mg, e.ws = mg, e.rendered
	e.out = outcome{ran: true, hash: e.rendered.Hash, revision: e.rendered.Revision, reason: planReason(mg, e.rendered.Hash)}
	e.t.locks.forget(mg.GetUID()) // a run killed from here on may leave the lock held
	err := e.runSteps(ctx, applySteps)
	if e.recovered {
		err = e.t.settle(ctx, mg, err)
	}
	e.t.recordLock(ctx, mg, e.out.lock)
	if err != nil {
		return managed.Applied{}, terraformError(err)
	}
	e.t.locks.free(mg.GetUID(), time.Now()) // the run ended, and released the lock itself
	if err := e.countResources(ctx); err != nil {
		return managed.Applied{}, err
	}
	details, err := e.t.publish(mg, e.ws, e.out)
	return managed.Applied{ConnectionDetails: details}, err
}

// countResources counts the resources an apply left in the state, from the state
// itself: what terraform says it added counts only this run's, which after an earlier
// failed create is not all there is.
func (e *run) countResources(ctx context.Context) error {
	if e.out.applied == nil {
		return nil
	}
	n, found, err := e.t.stateResources(ctx, e.mg)
	if found {
		e.out.applied.Resources = n
	}
	return err
}

// runSteps runs steps in order until one finishes the Apply or fails. A failure that
// names recovery imports with nothing to import plans again without them, as does a
// step asking to replan; plans are bounded by the imports there are.
func (e *run) runSteps(ctx context.Context, steps []step) error {
	budget := len(e.imports) + 2
	planStep := slices.IndexFunc(steps, func(s step) bool { return s.name == "plan" })
	for i := 0; i < len(steps); i++ {
		n, err := steps[i].do(e, ctx)
		if err != nil {
			if n, err = e.withoutMissingImports(ctx, err); err != nil {
				return err
			}
		}
		switch n {
		case finished:
			return nil
		case replan:
			if budget--; budget < 0 {
				return fmt.Errorf("%s: planned again too often", steps[i].name)
			}
			i = planStep - 1
		}
	}
	return nil
}

// clearStaleLock releases a state lock whose holder is provably gone.
func (e *run) clearStaleLock(ctx context.Context) (next, error) {
	return proceed, e.t.clearStaleLock(ctx, e.mg)
}

// recoverInterruptedCreate decides, for a resource whose last create was interrupted,
// how it carries on: with what terraform recorded, with recovery imports, or not at all
// (CreateInterrupted).
func (e *run) recoverInterruptedCreate(ctx context.Context) (next, error) {
	if !pending(e.mg) {
		e.recovered = true
		return proceed, nil
	}
	imports, err := e.t.recoverCreate(ctx, e.mg, e.rendered)
	if err != nil {
		return proceed, err // still interrupted: the record stays for the user's answer
	}
	e.imports = imports
	if err := e.renderImports(ctx); err != nil {
		return proceed, err
	}
	e.recovered = true
	return proceed, nil
}

// createDirectly creates a resource never applied whose changes need no decision with
// one combined plan-and-apply.
func (e *run) createDirectly(ctx context.Context) (next, error) {
	if !createsDirectly(e.mg) || e.t.hasPolicies(ctx, e.mg) {
		return proceed, nil
	}
	if err := e.t.markCreating(ctx, e.mg); err != nil {
		return proceed, err
	}
	res, err := e.t.runner.Create(ctx, e.ws.Workspace)
	if err != nil {
		return proceed, err
	}
	e.out.applied, e.out.outputs, e.out.lock = &res, res.Outputs, res.Lock
	return finished, nil
}

// makePlan plans: the saved plan spec.approvedPlan approves, or a new one (always a new
// one once a saved plan went stale). A plan without changes ends the Apply, dropping a
// saved plan that was never applied.
func (e *run) makePlan(ctx context.Context) (next, error) {
	var err error
	if e.staleTried {
		e.plan, err = e.t.newPlan(ctx, e.mg, e.ws)
	} else {
		e.plan, err = e.t.planFor(ctx, e.mg, e.ws, e.out.reason)
	}
	e.out.plan = e.plan
	if err != nil {
		return proceed, err
	}
	if e.plan.HasChanges() {
		return proceed, nil
	}
	e.out.outputs, e.out.lock = e.plan.Outputs, e.plan.Lock
	return finished, e.t.discardUnapplied(ctx, e.mg)
}

// decide lets change control decide on the plan: apply it, hold it (saved, to be
// approved) or only report it as drift; the plan policies have their say first
// (checkPolicies).
func (e *run) decide(ctx context.Context) (next, error) {
	verdict, err := decide(e.mg, e.plan, e.out.reason, e.t.kind.Terraform.HarmlessReplacements)
	if stop, perr := e.checkPolicies(ctx, verdict); stop {
		return finished, perr
	}
	switch verdict {
	case observeOnly:
		e.out.drift = true
		return finished, e.t.plans.KeepText(ctx, e.mg, e.plan, e.out.reason, e.ws.Hash)
	case holdPlan:
		if serr := e.t.plans.Save(ctx, e.mg, e.plan, e.out.reason, e.ws.Hash); serr != nil {
			return finished, serr
		}
		return finished, err
	}
	return proceed, nil
}

// markCreating records, before an apply that creates, that a create is in flight.
func (e *run) markCreating(ctx context.Context) (next, error) {
	return proceed, e.t.markCreating(ctx, e.mg)
}

// markMissing records, before an apply that recreates objects deleted outside Terraform,
// that they are gone: Ready=False and Drifted=True name them while terraform runs.
func (e *run) markMissing(ctx context.Context) (next, error) {
	if len(e.plan.Gone) == 0 || e.progress == nil {
		return proceed, nil
	}
	st, gen := e.mg.GetManagedStatus(), e.mg.GetGeneration()
	resource.NotReady(common.ReasonMissing, goneMessage(e.plan, "terraform is recreating them")).Set(&st.Conditions, gen)
	resource.SetCondition(&st.Conditions, gen, common.TypeDrifted, metav1.ConditionTrue, common.ReasonDriftDetected, driftMessage(e.plan))
	return proceed, e.progress(ctx)
}

// apply applies the plan. A saved plan gone stale is planned again, once. The plan's
// lock is the resource's from then on, even when the apply fails: it may have written
// state with those providers.
func (e *run) apply(ctx context.Context) (next, error) {
	res, err := e.t.runner.ApplyPlan(ctx, e.ws.Workspace, e.plan)
	var stale *engine.StalePlanError
	if errors.As(err, &stale) && !e.staleTried {
		e.staleTried = true
		return replan, nil
	}
	e.out.lock = e.plan.Lock
	if err != nil {
		return proceed, err
	}
	e.out.applied, e.out.outputs = &res, res.Outputs
	if res.Lock != nil {
		e.out.lock = res.Lock
	}
	return proceed, nil
}

// keepText keeps the applied plan's text for `terraplane plan show` and reviewers.
func (e *run) keepText(ctx context.Context) (next, error) {
	return finished, e.t.plans.KeepText(ctx, e.mg, e.plan, e.out.reason, e.ws.Hash)
}

// withoutMissingImports handles a failure that names recovery imports whose objects do
// not exist (the interrupted create made some objects and not others): it adopts those
// that exist and creates the rest, planning again without the missing ones.
func (e *run) withoutMissingImports(ctx context.Context, err error) (next, error) {
	missing := missingImports(err)
	if len(missing) == 0 || len(e.imports) == 0 {
		return proceed, err
	}
	e.imports = slices.DeleteFunc(e.imports, func(im common.ImportInstruction) bool { return slices.Contains(missing, im.Address) })
	if rerr := e.renderImports(ctx); rerr != nil {
		return proceed, rerr
	}
	return replan, nil
}

// renderImports renders the workspace again with the recovery imports added.
func (e *run) renderImports(ctx context.Context) error {
	if len(e.imports) == 0 {
		e.ws = e.rendered
		return nil
	}
	cp := e.mg.DeepCopyObject().(resource.Managed)
	spec := cp.GetManagedSpec()
	spec.Imports = append(spec.Imports, e.imports...)
	ws, err := e.t.render.Render(ctx, cp)
	if err != nil {
		return err
	}
	e.ws = ws
	return nil
}
