package terraform

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/planstore"
	"terraplane.io/terraplane/internal/resource"
)

// retries says how soon each outcome of mg is looked at again: a success, or a held
// plan, at its drift interval.
func (r *connector) retries(mg resource.Managed) resource.Retries {
	interval := r.driftInterval(mg)
	drift := interval + jitter(interval)
	return resource.Retries{Success: drift, UserError: r.opts.UserErrorRetry, Waiting: 5 * time.Second, Held: drift}
}

// recordRun writes what terraform did into status.terraform, the Drifted condition and
// the events that announce applies and drift.
func (r *connector) recordRun(mg resource.Managed, out outcome, gen int64, succeeded bool) {
	if !out.ran {
		return
	}
	st := mg.GetManagedStatus()
	tf := &st.Terraform
	now := metav1.Now()
	tf.LastPlanTime = &now
	tf.LastHandledRequest = mg.GetAnnotations()[common.RequestedAtAnnotation]
	if out.plan != nil && out.plan.HasChanges() && (tf.Plan == nil || tf.Plan.ID != out.plan.ID) {
		tf.Plan = planstore.Summary(out.plan.ID, out.reason, out.plan.Changes, out.hash, now)
		tf.Plan.Providers = planstore.ProviderSummary(out.plan.ProviderChanges)
	}
	if out.plan != nil && out.plan.HasChanges() && tf.Plan != nil && tf.Plan.ID == out.plan.ID {
		tf.Plan.Policies, tf.Plan.PoliciesHash = nil, ""
		if out.policies != nil {
			tf.Plan.Policies, tf.Plan.PoliciesHash = policyResults(out.policies.results), out.policies.hash
		}
	}
	if out.lock != nil {
		tf.ProviderLock = string(out.lock)
	}
	switch {
	case out.applied != nil:
		r.recordApply(mg, out, now)
		resource.SetCondition(&st.Conditions, gen, common.TypeDrifted, metav1.ConditionFalse, common.ReasonNoDrift, "")
	case out.drift || pendingOutcome(out) && (out.reason == common.PlanDrift || len(out.plan.Gone) > 0):
		resource.SetCondition(&st.Conditions, gen, common.TypeDrifted, metav1.ConditionTrue, common.ReasonDriftDetected, driftMessage(out.plan))
	case succeeded:
		resource.SetCondition(&st.Conditions, gen, common.TypeDrifted, metav1.ConditionFalse, common.ReasonNoDrift, "")
	}
	if succeeded && !out.drift {
		tf.InputsHash = out.hash
		st.Revision = out.revision
	}
}

// pendingOutcome reports whether the sync left a plan with changes unapplied.
func pendingOutcome(out outcome) bool {
	return out.applied == nil && out.plan != nil && out.plan.HasChanges()
}

// recordApply records an apply in status.terraform and announces it.
func (r *connector) recordApply(mg resource.Managed, out outcome, now metav1.Time) {
	tf := &mg.GetManagedStatus().Terraform
	res := out.applied
	id := ""
	if out.plan != nil {
		id = out.plan.ID
	} else {
		id = engine.ChangesID(res.Changes) // a create without a saved plan
		tf.Plan = planstore.Summary(id, out.reason, res.Changes, out.hash, now)
	}
	c := engine.CountChanges(res.Changes)
	tf.LastApply = &common.ApplySummary{ID: id, Add: c.Add, Change: c.Change, Destroy: c.Destroy, Replace: c.Replace, Time: now}
	tf.LastApplyTime = &now
	if res.Resources >= 0 {
		tf.Resources = res.Resources
	}
	r.recorder.Eventf(mg, corev1.EventTypeNormal, "Applied", "applied plan %s (%s, reason %s)", id, c, out.reason)
	if out.reason == common.PlanDrift {
		r.recorder.Eventf(mg, corev1.EventTypeNormal, common.ReasonDriftCorrected, "corrected drift with plan %s (%s)", id, c)
	}
}

// driftDetected announces drift the periodic plan found, once per plan.
func (r *connector) driftDetected(mg resource.Managed, plan *engine.Plan) {
	if prev := mg.GetManagedStatus().Terraform.Plan; prev != nil && prev.ID == plan.ID && pendingPlan(mg) != nil {
		return // already announced
	}
	driftDetectedTotal.WithLabelValues(r.kind.GVK.Kind, r.kind.GVK.Group).Inc()
	r.recorder.Eventf(mg, corev1.EventTypeNormal, common.ReasonDriftDetected, "the periodic plan found drift: %s", driftMessage(plan))
}

// recordLock keeps the lock a run left mg with where its kind keeps its module's (a
// ModuleClass's status), if the kind does; a failure only means a later run records it.
func (r *connector) recordLock(ctx context.Context, mg resource.Managed, lock []byte) {
	if lock == nil || r.kind.Terraform.RecordLock == nil {
		return
	}
	if err := r.kind.Terraform.RecordLock(ctx, r.client, mg, lock); err != nil {
		log.FromContext(ctx).Info("could not record the provider lock", "error", err.Error())
	}
}

