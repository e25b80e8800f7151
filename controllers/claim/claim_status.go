package claim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Condition reasons of claims.
const (
	ReasonBound          = "Bound"
	ReasonWaiting        = "WaitingForResource"
	ReasonReconcileError = "ReconcileError"
	ReasonSucceeded      = "ReconcileSuccess"
	// ReasonWaitingForFirstConsumer: the class binds on first consumer and none is scheduled.
	ReasonWaitingForFirstConsumer = "WaitingForFirstConsumer"
)

// waitRetry is how soon a claim that waits on something under way is looked at again.
const waitRetry = 5 * time.Second

// statusCoalesce is how long a claim's status waits for a new resource's first status:
// a resource that is Ready within it (a quick apply) costs the claim one status write,
// not two; a slow one shows Bound and waiting after it.
const statusCoalesce = 5 * time.Second

// firstStatusWait is how much longer the claim's status should wait for mg, a resource
// that no reconciler has reported on yet; zero when it should be written now.
func firstStatusWait(mg resource.Managed) time.Duration {
	st := mg.GetManagedStatus()
	if st.BindingPhase != "" || len(st.Conditions) > 0 {
		return 0
	}
	return max(0, statusCoalesce-time.Since(mg.GetCreationTimestamp().Time))
}

// finish derives the claim's status from its bound resource and the reconcile's error,
// emits one event per new problem, and maps the error to a result.
func (r *Reconciler) finish(ctx context.Context, claim resource.Claim, mg resource.Managed, err error) (ctrl.Result, error) {
	if claim.GetDeletionTimestamp() != nil && err == nil {
		return ctrl.Result{}, nil // finalizer removed; the claim is gone
	}
	orig := claim.DeepCopyObject().(resource.Claim)
	st := claim.GetClaimStatus()
	gen := claim.GetGeneration()
	r.mirrorResource(claim, mg)
	result, retErr := ctrl.Result{}, error(nil)
	switch u, user := resource.AsUserError(err); {
	case err == nil:
		resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionTrue, ReasonSucceeded, "")
		if !resource.IsReady(st.Conditions) {
			result.RequeueAfter = r.opts.UserErrorRetry
		}
	case user:
		if resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionFalse, u.Reason, u.Message) {
			r.recorder.Event(claim, corev1.EventTypeWarning, u.Reason, u.Message)
		}
		result.RequeueAfter = r.opts.UserErrorRetry
	default:
		if w, waiting := resource.AsWaiting(err); waiting {
			resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionTrue, w.Reason, w.Message)
			result.RequeueAfter = waitRetry
			if w.Reason == ReasonWaitingForFirstConsumer {
				result.RequeueAfter = r.opts.UserErrorRetry // the application watch acts first
			}
			break
		}
		if resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionFalse, ReasonReconcileError, err.Error()) {
			r.recorder.Event(claim, corev1.EventTypeWarning, ReasonReconcileError, err.Error())
		}
		retErr = err
	}
	if uerr := resource.PatchStatus(ctx, r.client, claim, orig); uerr != nil {
		return ctrl.Result{}, fmt.Errorf("update status: %w", uerr)
	}
	return result, retErr
}

// mirrorResource sets the binding phase and copies the resource's Ready condition.
func (r *Reconciler) mirrorResource(claim resource.Claim, mg resource.Managed) {
	st := claim.GetClaimStatus()
	gen := claim.GetGeneration()
	if mg == nil {
		if st.BindingPhase == "" || claim.GetClaimSpec().ResourceRef == nil {
			st.BindingPhase = common.BindingPhaseUnbound
		}
		if !resource.IsReady(st.Conditions) {
			resource.SetCondition(&st.Conditions, gen, common.TypeReady, metav1.ConditionFalse, ReasonWaiting, "the claim is not bound to a resource")
		}
		return
	}
	st.BindingPhase = common.BindingPhaseBound
	ready := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeReady)
	if ready == nil {
		resource.SetCondition(&st.Conditions, gen, common.TypeReady, metav1.ConditionFalse, ReasonWaiting,
			fmt.Sprintf("waiting for %s %s/%s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName()))
		return
	}
	if synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced); ready.Status != metav1.ConditionTrue &&
		synced != nil && synced.Status == metav1.ConditionFalse {
		resource.SetCondition(&st.Conditions, gen, common.TypeReady, metav1.ConditionFalse, synced.Reason,
			fmt.Sprintf("%s %s/%s: %s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), synced.Message))
		return
	}
	resource.SetCondition(&st.Conditions, gen, common.TypeReady, ready.Status, ready.Reason, ready.Message)
}
