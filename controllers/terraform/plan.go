package terraform

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	"terraplane.io/terraplane/internal/engine"
)

// makePlan plans: the saved plan spec.approvedPlan approves, or a new one (always a new
// one once a saved plan went stale). A plan without changes ends the run, dropping a
// saved plan that was never applied.
func (e *run) makePlan(ctx context.Context) (next, error) {
	var err error
	if e.staleTried {
		e.plan, err = e.newPlan(ctx)
	} else {
		e.plan, err = e.planFor(ctx)
	}
	e.out.plan = e.plan
	if err != nil {
		return proceed, err
	}
	if e.plan.HasChanges() {
		return proceed, nil
	}
	e.out.outputs, e.out.lock = e.plan.Outputs, e.plan.Lock
	return finished, e.discardUnapplied(ctx)
}

// planFor returns the saved plan that spec.approvedPlan approves, when it was made from
// the inputs that run; otherwise a new plan, whose drift is announced.
func (e *run) planFor(ctx context.Context) (*engine.Plan, error) {
	if e.sit.approved && e.ws.Hash == e.rendered.Hash {
		saved, hash, err := e.t.plans.Load(ctx, e.mg)
		if err != nil {
			return nil, err
		}
		if saved != nil && saved.ID == e.sit.held.ID && hash == e.ws.Hash {
			return saved, nil
		}
	}
	plan, err := e.newPlan(ctx)
	if err == nil && (e.sit.reason == common.PlanDrift || len(plan.Gone) > 0) && plan.ChangesInfrastructure() {
		e.driftDetected(plan)
	}
	return plan, err
}

// newPlan makes a plan of the workspace, reading the outputs too when there is nothing
// to apply and the inputs changed since the last apply (their values may follow the
// inputs).
func (e *run) newPlan(ctx context.Context) (*engine.Plan, error) {
	key, err := e.t.plans.Key(ctx, e.mg.GetNamespace())
	if err != nil {
		return nil, err
	}
	tf := e.mg.GetManagedStatus().Terraform
	opts := engine.PlanOptions{Key: key, Outputs: tf.InputsHash != e.ws.Hash || tf.LastApplyTime == nil,
		LookForUpgrades: e.t.kind.Terraform.OfferUpgrade != nil && e.sit.looksForUpgrades(e.mg),
		Reread:          !e.staleTried && e.sit.onlyChecksDrift(e.mg)}
	if tf.ProviderLock != "" && tf.ProviderLock != string(e.ws.Lock) {
		opts.LockedBefore = []byte(tf.ProviderLock) // a new revision's lock: the plan names the move
	}
	return watched(ctx, e, func() (*engine.Plan, error) { return e.t.runner.Plan(ctx, e.ws.Workspace, opts) })
}

// discardUnapplied drops the saved plan of the resource's latest plan with changes when
// it was never applied: a plan without changes replaces it.
func (e *run) discardUnapplied(ctx context.Context) error {
	tf := e.mg.GetManagedStatus().Terraform
	if tf.Plan == nil || tf.LastApply != nil && tf.LastApply.ID == tf.Plan.ID {
		return nil
	}
	return e.t.plans.Discard(ctx, e.mg)
}

// driftDetected announces drift the plan found, once per plan.
func (e *run) driftDetected(plan *engine.Plan) {
	if prev := e.mg.GetManagedStatus().Terraform.Plan; prev != nil && prev.ID == plan.ID && e.sit.held != nil {
		return // already announced
	}
	driftDetectedTotal.WithLabelValues(e.t.kind.GVK.Kind, e.t.kind.GVK.Group).Inc()
	e.t.recorder.Eventf(e.mg, corev1.EventTypeNormal, common.ReasonDriftDetected, "the periodic plan found drift: %s", driftMessage(plan))
}
