package managed

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// Condition reasons of managed resources.
const (
	ReasonAvailable = resource.ReasonAvailable
	ReasonCreating  = resource.ReasonCreating
	ReasonDeleting  = resource.ReasonDeleting
	// ReasonDriftDetected: the external resource differs from the spec.
	ReasonDriftDetected = "DriftDetected"
	// ReasonNoDrift: the last plan found the external resource matches the spec.
	ReasonNoDrift = "NoDrift"
)

// retries says how soon each outcome of a managed resource is looked at again.
func (r *Reconciler) retries() resource.Retries {
	drift := r.opts.DriftInterval + jitter(r.opts.DriftInterval)
	return resource.Retries{Success: drift, UserError: r.opts.UserErrorRetry, Waiting: 5 * time.Second, Held: drift}
}

// finish maps the reconcile's error to conditions, one event, and a result — the only
// place where errors become results. The status speaks for the generation the reconcile
// rendered (orig's): a write during the run may have refreshed mg to a newer one.
func (r *Reconciler) finish(ctx context.Context, orig, mg resource.Managed, out outcome, err error) (ctrl.Result, error) {
	st := mg.GetManagedStatus()
	gen := orig.GetGeneration()
	resource.SyncBindingPhase(mg)
	o := resource.Classify(err, r.retries())
	if o.Err != nil {
		o.Message = engine.Summary(err)
		o.Err = errors.New(o.Message)                                             // the error log gets one line too
		log.FromContext(ctx).V(1).Info("terraform failed", "detail", err.Error()) // redacted by the engine
	}
	r.recordRun(mg, out, gen, o.Succeeded())
	notes := o.SetSynced(&st.Conditions, gen)
	switch {
	case o.Succeeded():
		st.ObservedGeneration = gen
		resource.Available().Set(&st.Conditions, gen)
	case !resource.IsReady(st.Conditions): // a failed change leaves a resource once created Ready
		resource.Creating("waiting for a successful apply").Set(&st.Conditions, gen)
	}
	result, rerr := r.finisher().Finish(ctx, mg, orig, o, notes)
	if rerr != nil {
		log.FromContext(ctx).Info("reconcile failed; retrying with backoff", "error", rerr.Error())
	}
	if o.Succeeded() || o.Reason == ReasonAwaitingApproval {
		result.Priority = ptr.To(handler.LowPriority) // drift checks wait behind user changes
	}
	return result, rerr
}

// recordRun writes what terraform did into status.terraform, the Drifted condition and
// the events that announce applies and drift.
func (r *Reconciler) recordRun(mg resource.Managed, out outcome, gen int64, succeeded bool) {
	if !out.ran {
		return
	}
	st := mg.GetManagedStatus()
	tf := &st.Terraform
	now := metav1.Now()
	tf.LastPlanTime = &now
	tf.LastHandledRequest = mg.GetAnnotations()[RequestedAtAnnotation]
	if out.plan != nil && out.plan.HasChanges() && (tf.Plan == nil || tf.Plan.ID != out.plan.ID) {
		tf.Plan = planSummary(out.plan.ID, out.reason, out.plan.Changes, out.hash, now)
	}
	switch {
	case out.applied != nil:
		r.recordApply(mg, out, now)
		resource.SetCondition(&st.Conditions, gen, common.TypeDrifted, metav1.ConditionFalse, ReasonNoDrift, "")
	case out.drift || out.reason == common.PlanDrift && pendingOutcome(out):
		resource.SetCondition(&st.Conditions, gen, common.TypeDrifted, metav1.ConditionTrue, ReasonDriftDetected,
			fmt.Sprintf("plan %s: %s", out.plan.ID, listChanges(out.plan, 5)))
	case succeeded:
		resource.SetCondition(&st.Conditions, gen, common.TypeDrifted, metav1.ConditionFalse, ReasonNoDrift, "")
	}
	if succeeded && !out.drift {
		tf.InputsHash = out.hash
	}
}

// pendingOutcome reports whether the sync left a plan with changes unapplied.
func pendingOutcome(out outcome) bool {
	return out.applied == nil && out.plan != nil && out.plan.HasChanges()
}

// recordApply records an apply in status.terraform and announces it.
func (r *Reconciler) recordApply(mg resource.Managed, out outcome, now metav1.Time) {
	tf := &mg.GetManagedStatus().Terraform
	res := out.applied
	id := ""
	if out.plan != nil {
		id = out.plan.ID
	} else {
		id = engine.ChangesID(res.Changes) // a create without a saved plan
		tf.Plan = planSummary(id, out.reason, res.Changes, out.hash, now)
	}
	c := engine.CountChanges(res.Changes)
	tf.LastApply = &common.ApplySummary{ID: id, Add: c.Add, Change: c.Change, Destroy: c.Destroy, Replace: c.Replace, Time: now}
	tf.LastApplyTime = &now
	if res.Resources >= 0 {
		tf.Resources = res.Resources
	}
	r.recorder.Eventf(mg, corev1.EventTypeNormal, "Applied", "applied plan %s (%s, reason %s)", id, c, out.reason)
	if out.reason == common.PlanDrift {
		r.recorder.Eventf(mg, corev1.EventTypeNormal, "DriftCorrected", "corrected drift with plan %s (%s)", id, c)
	}
}

// driftDetected announces drift the periodic plan found, once per plan.
func (r *Reconciler) driftDetected(mg resource.Managed, plan *engine.Plan) {
	if prev := mg.GetManagedStatus().Terraform.Plan; prev != nil && prev.ID == plan.ID && pendingPlan(mg) != nil {
		return // already announced
	}
	driftDetectedTotal.WithLabelValues(r.kind.GVK.Kind, r.kind.GVK.Group).Inc()
	r.recorder.Eventf(mg, corev1.EventTypeNormal, ReasonDriftDetected, "the periodic plan found drift: plan %s (%s): %s",
		plan.ID, engine.CountChanges(plan.Changes), listChanges(plan, 5))
}

// planSummary is the status form of a plan.
func planSummary(id string, reason common.PlanReason, changes []engine.Change, hash string, at metav1.Time) *common.PlanSummary {
	c := engine.CountChanges(changes)
	s := &common.PlanSummary{ID: id, Reason: reason, Add: c.Add, Change: c.Change, Destroy: c.Destroy, Replace: c.Replace,
		Import: c.Import, CreatedAt: at, InputsHash: hash}
	for i, ch := range changes {
		if i == common.MaxPlannedChanges {
			s.ChangesOmitted = len(changes) - i
			break
		}
		s.Changes = append(s.Changes, common.PlannedChange{Address: ch.Address, Actions: ch.Actions})
	}
	return s
}

// observe records that mg's current generation needs no terraform run (an edit that
// changes nothing terraform sees, such as the reclaim policy): its conditions now speak
// for that generation, so its claim knows the edit is applied.
func (r *Reconciler) observe(ctx context.Context, orig, mg resource.Managed, result ctrl.Result) (ctrl.Result, error) {
	st := mg.GetManagedStatus()
	gen := mg.GetGeneration()
	if st.ObservedGeneration == gen {
		return result, nil
	}
	st.ObservedGeneration = gen
	for i := range st.Conditions {
		st.Conditions[i].ObservedGeneration = gen
	}
	if err := resource.PatchStatus(ctx, r.client, mg, orig, false); err != nil {
		return ctrl.Result{}, err
	}
	return result, nil
}

// finishDelete maps a deletion's error to a result.
func (r *Reconciler) finishDelete(ctx context.Context, mg resource.Managed, err error) (ctrl.Result, error) {
	if err == nil {
		return ctrl.Result{}, nil
	}
	orig := mg.DeepCopyObject().(resource.Managed)
	gen := mg.GetGeneration()
	o := resource.Classify(err, r.retries())
	o.Message = "cannot delete: " + engine.Summary(err)
	if o.Err != nil {
		o.Err = errors.New(o.Message)
	}
	conds := &mg.GetManagedStatus().Conditions
	notes := o.SetSynced(conds, gen)
	resource.Deleting().Set(conds, gen)
	return r.finisher().Finish(ctx, mg, orig, o, notes)
}

// finisher writes managed resources' status, unguarded: only this reconciler writes
// their conditions (the claim reconciler writes bindingPhase alone).
func (r *Reconciler) finisher() resource.Finisher {
	return resource.Finisher{Client: r.client, Recorder: r.recorder}
}
