package terraform

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// createDirectly creates a resource never applied whose changes need no decision with
// one combined plan-and-apply. A create that plan policies check is checked inside that
// apply, before its first change, when it can be (createCheck); one that does not pass,
// or cannot be checked there, is planned first. A recovery import that finds nothing to
// import sends the run on to plan without it.
func (e *run) createDirectly(ctx context.Context) (next, error) {
	if !e.sit.createsDirectly(e.mg) {
		return proceed, nil
	}
	check, planFirst, err := e.createCheck(ctx)
	if err != nil || planFirst {
		return proceed, err
	}
	if _, err := e.markCreating(ctx); err != nil {
		return proceed, err
	}
	ws := e.workspace()
	if check != nil {
		ws.Check = check.raw
	}
	res, err := watched(ctx, e, func() (engine.Result, error) { return e.t.runner.Create(ctx, ws) })
	var refused *engine.CreateRefusedError
	if errors.As(err, &refused) {
		// Nothing was made: planned first, the policies' verdict comes with its plan.
		log.FromContext(ctx).V(1).Info("create planned first", "resource", e.mg.GetName(), "reason", refused.Reason)
		return proceed, nil
	}
	if err != nil {
		if n, rerr := e.withoutMissingImports(ctx, err); n == replan {
			return proceed, rerr
		}
		return proceed, err
	}
	if check != nil {
		if err := e.passed(check, res.Checked); err != nil {
			return proceed, err
		}
	}
	e.out.applied, e.out.outputs, e.out.lock = &res, res.Outputs, res.Lock
	e.announceApply()
	return finished, nil
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
	res, err := watched(ctx, e, func() (engine.Result, error) { return e.t.runner.ApplyPlan(ctx, e.workspace(), e.plan) })
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
	e.announceApply()
	return proceed, nil
}

// keepText keeps the applied plan's text for `terraplane plan show` and reviewers.
func (e *run) keepText(ctx context.Context) (next, error) {
	return finished, e.t.plans.KeepText(ctx, e.mg, e.plan, e.sit.reason, e.ws.Hash)
}

// announceApply announces what the run applied, and a drift it corrected.
func (e *run) announceApply() {
	id, c := e.appliedID(), engine.CountChanges(e.out.applied.Changes)
	e.t.recorder.Eventf(e.mg, corev1.EventTypeNormal, "Applied", "applied plan %s (%s, reason %s)", id, c, e.sit.reason)
	if e.sit.reason == common.PlanDrift {
		e.t.recorder.Eventf(e.mg, corev1.EventTypeNormal, common.ReasonDriftCorrected, "corrected drift with plan %s (%s)", id, c)
	}
}

// appliedID is the id of what the run applied: its plan's, or, for a create without a
// saved plan, its changes'.
func (e *run) appliedID() string {
	if e.out.plan != nil {
		return e.out.plan.ID
	}
	return engine.ChangesID(e.out.applied.Changes)
}
