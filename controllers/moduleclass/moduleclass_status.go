package moduleclass

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Reasons of the Ready and Synced conditions.
const (
	ReasonValid   = "ModuleValid"
	ReasonRead    = "ModuleRead"
	ReasonInvalid = "InvalidMapping"
)

// retryProblem is how soon a class stopped by something no watch sees (a repository, a
// registry, a provider mirror) is looked at again.
const retryProblem = time.Minute

// finish derives the conditions from the phase that failed: Synced says whether the
// module could be read from its source, Ready whether claims can bind to the class. It
// emits one event per new problem, writes the status, and asks to run again when the
// source moves (a branch or a tag) or a problem may clear by itself.
func (r *Reconciler) finish(ctx context.Context, c *check) (ctrl.Result, error) {
	u, user := resource.AsUserError(c.err)
	if c.err != nil && !user {
		return ctrl.Result{}, c.err
	}
	st, gen := &c.class.Status, c.class.Generation
	var result ctrl.Result
	switch {
	case c.err == nil:
		resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionTrue, ReasonRead, "")
		resource.SetCondition(&st.Conditions, gen, common.TypeReady, metav1.ConditionTrue, ReasonValid, "")
	case c.failed == phaseLoad:
		st.Variables, st.Outputs, st.Revision = nil, nil, ""
		resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionFalse, u.Reason, u.Message)
		if resource.SetCondition(&st.Conditions, gen, common.TypeReady, metav1.ConditionFalse, u.Reason, u.Message) {
			r.events.Event(c.class, corev1.EventTypeWarning, u.Reason, u.Message)
		}
		result.RequeueAfter = retryProblem
	default:
		resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionTrue, ReasonRead, "")
		if resource.SetCondition(&st.Conditions, gen, common.TypeReady, metav1.ConditionFalse, u.Reason, u.Message) {
			r.events.Event(c.class, corev1.EventTypeWarning, u.Reason, u.Message)
		}
		if c.failed == phaseProviders {
			result.RequeueAfter = retryProblem // no watch sees a mirror fill up
		}
	}
	if c.loaded != nil && c.loaded.Moving && (result.RequeueAfter == 0 || r.loader.RefreshPeriod() < result.RequeueAfter) {
		result.RequeueAfter = r.loader.RefreshPeriod()
	}
	if err := r.client.Status().Patch(ctx, c.class, client.MergeFrom(c.orig)); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("update status: %w", err)
	}
	return result, nil
}
