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
	// ReasonApplying: the claim's latest edit is on its way to the resource.
	ReasonApplying = "Applying"
	// ReasonClassNotFound: the claim's class (or the class it points at) does not exist.
	// While a Bound claim reports it, its spec.classRef may name another class.
	ReasonClassNotFound = "ClassNotFound"
	// ReasonClassChanged: the claim's class now makes another kind than the bound resource.
	ReasonClassChanged = "ClassChanged"
	// ReasonDeletionBlocked: the deleted claim waits for its resource's destroy, which fails.
	ReasonDeletionBlocked = "DeletionBlocked"
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
	applied := appliedBy(mg) && err == nil // an edit that could not reach mg is not applied
	r.mirrorResource(claim, mg, applied)
	result, retErr := ctrl.Result{}, error(nil)
	switch u, user := resource.AsUserError(err); {
	case err == nil:
		r.mirrorSynced(claim, mg)
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
	setProgress(claim, applied)
	if uerr := resource.PatchStatus(ctx, r.client, claim, orig); uerr != nil {
		return ctrl.Result{}, fmt.Errorf("update status: %w", uerr)
	}
	return result, retErr
}

// appliedBy says whether mg has applied its current spec: Synced and Ready, both said
// about its current generation. The claim's edits reach mg's spec before this is asked.
func appliedBy(mg resource.Managed) bool {
	if mg == nil {
		return false
	}
	conds := mg.GetManagedStatus().Conditions
	synced := meta.FindStatusCondition(conds, common.TypeSynced)
	return synced != nil && synced.Status == metav1.ConditionTrue && synced.ObservedGeneration == mg.GetGeneration() && resource.IsReady(conds)
}

// mirrorSynced makes the claim's Synced say what its resource's does: a failed update, a
// plan awaiting approval or a refused change is the claim's problem too.
func (r *Reconciler) mirrorSynced(claim resource.Claim, mg resource.Managed) {
	st := claim.GetClaimStatus()
	if mg != nil {
		if synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced); synced != nil && synced.Status == metav1.ConditionFalse {
			msg := fmt.Sprintf("%s %s/%s: %s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), synced.Message)
			if resource.SetCondition(&st.Conditions, claim.GetGeneration(), common.TypeSynced, metav1.ConditionFalse, synced.Reason, msg) {
				r.recorder.Event(claim, corev1.EventTypeWarning, synced.Reason, msg)
			}
			return
		}
	}
	resource.SetCondition(&st.Conditions, claim.GetGeneration(), common.TypeSynced, metav1.ConditionTrue, ReasonSucceeded, "")
}

// setProgress records how far the claim's latest generation got, the way kstatus (and so
// kubectl wait, Flux and Argo CD) reads it: applied (status.observedGeneration caught up,
// no Reconciling or Stalled), stalled (Synced=False for a reason someone must act on:
// observedGeneration caught up, Stalled=True), or in progress (Reconciling=True, and
// observedGeneration stays at the last generation applied).
func setProgress(claim resource.Claim, applied bool) {
	st := claim.GetClaimStatus()
	gen := claim.GetGeneration()
	synced := meta.FindStatusCondition(st.Conditions, common.TypeSynced)
	switch {
	case synced != nil && synced.Status == metav1.ConditionFalse && synced.Reason != ReasonReconcileError:
		st.ObservedGeneration = gen
		meta.RemoveStatusCondition(&st.Conditions, common.TypeReconciling)
		resource.SetCondition(&st.Conditions, gen, common.TypeStalled, metav1.ConditionTrue, synced.Reason, synced.Message)
	case applied:
		st.ObservedGeneration = gen
		meta.RemoveStatusCondition(&st.Conditions, common.TypeReconciling)
		meta.RemoveStatusCondition(&st.Conditions, common.TypeStalled)
	default:
		meta.RemoveStatusCondition(&st.Conditions, common.TypeStalled)
		resource.SetCondition(&st.Conditions, gen, common.TypeReconciling, metav1.ConditionTrue, ReasonApplying,
			fmt.Sprintf("generation %d is not applied yet", gen))
	}
}

// mirrorResource sets the binding phase and copies the resource's Ready condition. Ready
// speaks for the claim's current generation only once that is applied; until then it
// keeps the generation last applied, so `kubectl wait --for=condition=Ready` after an
// edit waits for the edit.
func (r *Reconciler) mirrorResource(claim resource.Claim, mg resource.Managed, applied bool) {
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
	readyGen := gen
	if !applied {
		readyGen = st.ObservedGeneration
	}
	ready := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeReady)
	if ready == nil {
		resource.SetCondition(&st.Conditions, readyGen, common.TypeReady, metav1.ConditionFalse, ReasonWaiting,
			fmt.Sprintf("waiting for %s %s/%s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName()))
		return
	}
	if synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced); ready.Status != metav1.ConditionTrue &&
		synced != nil && synced.Status == metav1.ConditionFalse {
		resource.SetCondition(&st.Conditions, readyGen, common.TypeReady, metav1.ConditionFalse, synced.Reason,
			fmt.Sprintf("%s %s/%s: %s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), synced.Message))
		return
	}
	resource.SetCondition(&st.Conditions, readyGen, common.TypeReady, ready.Status, ready.Reason, ready.Message)
}
