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
	ReasonReconcileError = common.ReasonReconcileError
	ReasonSucceeded      = common.ReasonReconcileSuccess
	// ReasonWaitingForFirstConsumer: the class binds on first consumer and none is scheduled.
	ReasonWaitingForFirstConsumer = "WaitingForFirstConsumer"
	// ReasonApplying: the claim's latest edit is on its way to the resource.
	ReasonApplying = common.ReasonApplying
	// ReasonClassNotFound: the claim's class (or the class it points at) does not exist.
	// While a Bound claim reports it, its spec.classRef may name another class.
	ReasonClassNotFound = "ClassNotFound"
	// ReasonClassChanged: the claim's class now makes another kind than the bound resource.
	ReasonClassChanged = "ClassChanged"
	// ReasonClassRevisionPending: the class is about to make its first revision, which the
	// claim's resource is made from.
	ReasonClassRevisionPending = "ClassRevisionPending"
	// ReasonDeletionBlocked: the deleted claim waits for its resource's destroy, which fails.
	ReasonDeletionBlocked = "DeletionBlocked"
)

// statusCoalesce is how long a claim's status waits for a new resource's first status:
// a resource that is Ready within it (a quick apply) costs the claim one status write,
// not two; a slow one shows Bound and waiting after it.
const statusCoalesce = 5 * time.Second

// queuedCoalesce is how long the status of a claim that was Queued waits for its new
// resource's first status: it says Queued, with its resourceRef set, until then, and a
// burst of claims costs each one status write for the wait and one for the outcome.
const queuedCoalesce = 30 * time.Second

// firstStatusWait is how much longer claim's status should wait for mg, a resource that
// no reconciler has reported on yet; zero when it should be written now.
func firstStatusWait(claim resource.Claim, mg resource.Managed) time.Duration {
	if reported(mg) {
		return 0
	}
	wait := statusCoalesce
	if synced := meta.FindStatusCondition(claim.GetClaimStatus().Conditions, common.TypeSynced); synced != nil && synced.Reason == ReasonQueued {
		wait = queuedCoalesce
	}
	return max(0, wait-time.Since(mg.GetCreationTimestamp().Time))
}

// reported says whether a reconciler has reported on mg: a binding phase, Synced or
// Ready. Reconciling alone, written as its first apply starts, is not a report.
func reported(mg resource.Managed) bool {
	st := mg.GetManagedStatus()
	return st.BindingPhase != "" || meta.FindStatusCondition(st.Conditions, common.TypeSynced) != nil ||
		meta.FindStatusCondition(st.Conditions, common.TypeReady) != nil
}

// finish derives the claim's status from its bound resource and the reconcile's error,
// emits one event per new problem and maps the error to a result (resource.Classify).
// The write is guarded: a reconcile that read the claim before the last status write (a
// lagging cache, queued again by a class's status write) loses, and repeats no event.
func (r *Reconciler) finish(ctx context.Context, claim resource.Claim, mg resource.Managed, err error) (ctrl.Result, error) {
	if claim.GetDeletionTimestamp() != nil && err == nil {
		return ctrl.Result{}, nil // finalizer removed; the claim is gone
	}
	orig := claim.DeepCopyObject().(resource.Claim)
	o, notes := r.record(claim, orig, mg, err)
	return resource.Finisher{Client: r.client, Recorder: r.recorder, Guarded: true}.Finish(ctx, claim, orig, o, notes)
}

// record records in the claim's status what its bound resource says (Ready, Synced,
// Drifted, connection details) and the reconcile's error: Synced, and whether the claim's
// generation is applied (an edit that could not reach mg is not). It returns the outcome
// and the events to send.
func (r *Reconciler) record(claim, orig resource.Claim, mg resource.Managed, err error) (resource.Outcome, []resource.Note) {
	st := claim.GetClaimStatus()
	applied := appliedBy(mg) && err == nil
	r.mirrorResource(claim, mg, applied)
	o := resource.Classify(err, resource.Retries{UserError: r.opts.UserErrorRetry, Waiting: resource.WaitRetry})
	switch w, waiting := resource.AsWaiting(err); {
	case err == nil:
		o = mirrorSynced(claim, mg, o)
		if mg == nil && !resource.IsReady(st.Conditions) {
			// A claim bound to a resource mirrors its Ready, and the resource's next status
			// write queues it (forManagedOf): no timer, which would wake each of ten
			// thousand waiting claims every UserErrorRetry while the fleet is made.
			o.Requeue = r.opts.UserErrorRetry
		}
	case waiting && w.Reason == ReasonWaitingForFirstConsumer:
		o.Requeue = r.opts.UserErrorRetry // the application watch acts first
	case waiting && w.Reason == ReasonQueued:
		o.Requeue = queuedRetryAfter(claim.GetCreationTimestamp().Time, time.Now()) // the intake gate wakes it when its turn comes
		resource.SetCondition(&st.Conditions, claim.GetGeneration(), common.TypeReady, metav1.ConditionFalse, ReasonQueued, w.Message)
	}
	notes := o.SetSynced(&st.Conditions, claim.GetGeneration())
	notes = append(notes, mirrorDrift(claim, mg)...)
	if mg != nil && err == nil { // mg's inputs follow the claim's spec only once synced
		notes = append(notes, mirrorOverrides(claim, mg)...)
	}
	resource.SetProgress(&st.Conditions, &st.ObservedGeneration, claim.GetGeneration(), applied)
	mirrorActivity(claim, mg)
	if firstReady(orig.GetClaimStatus().Conditions, st.Conditions) {
		resource.ObserveFirstReady(resource.ClaimFamily, r.kind.GVK, claim.GetCreationTimestamp().Time)
	}
	return o, notes
}

// mirrorActivity says on a claim whose latest generation is on its way what terraform
// is doing for it now, as its resource's Reconciling condition says while a command runs
// long (reason TerraformRunning): the resource operation in flight, and an edit queued.
func mirrorActivity(claim resource.Claim, mg resource.Managed) {
	st := claim.GetClaimStatus()
	mine := meta.FindStatusCondition(st.Conditions, common.TypeReconciling)
	if mg == nil || mine == nil || mine.Status != metav1.ConditionTrue {
		return
	}
	running := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeReconciling)
	if running == nil || running.Status != metav1.ConditionTrue || running.Reason != common.ReasonTerraformRunning {
		return
	}
	resource.SetCondition(&st.Conditions, claim.GetGeneration(), common.TypeReconciling, metav1.ConditionTrue, common.ReasonTerraformRunning,
		fmt.Sprintf("%s %s/%s: %s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), running.Message))
}

// firstReady reports whether a claim found with conditions before and left with after is
// Ready for the first time: its Ready mirrors its resource's, which once True goes False
// only while it is deleted (Terraform kinds) or its target cluster does not answer
// (native kinds, whose recovery counts again).
func firstReady(before, after []metav1.Condition) bool {
	ready := meta.FindStatusCondition(before, common.TypeReady)
	return resource.IsReady(after) && (ready == nil || ready.Status != metav1.ConditionTrue && ready.Reason != common.ReasonDeleting)
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
// plan awaiting approval or a refused change is the claim's problem too. A value terraform
// refused is named by the claim's parameter that set it.
func mirrorSynced(claim resource.Claim, mg resource.Managed, o resource.Outcome) resource.Outcome {
	if mg == nil {
		return o
	}
	synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced)
	if synced == nil || synced.Status != metav1.ConditionFalse {
		return o
	}
	o.Synced, o.Reason, o.EventType = metav1.ConditionFalse, synced.Reason, corev1.EventTypeWarning
	o.Message = fmt.Sprintf("%s %s/%s: %s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), asParameters(claim, synced.Message))
	return o
}

// mirrorResource sets the binding phase and copies the resource's Ready condition. Ready
// True speaks for the claim's current generation only once that is applied; until then it
// keeps the generation last applied, so `kubectl wait --for=condition=Ready` after an
// edit waits for the edit. Ready False (waiting, failing) vouches for nothing, and speaks
// for the current generation.
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
	ready := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeReady)
	readyGen := gen
	if !applied && ready != nil && ready.Status == metav1.ConditionTrue {
		readyGen = lastApplied(st)
	}
	if ready == nil {
		resource.SetCondition(&st.Conditions, readyGen, common.TypeReady, metav1.ConditionFalse, ReasonWaiting,
			fmt.Sprintf("waiting for %s %s/%s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName()))
		return
	}
	if synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced); ready.Status != metav1.ConditionTrue &&
		synced != nil && synced.Status == metav1.ConditionFalse {
		resource.SetCondition(&st.Conditions, readyGen, common.TypeReady, metav1.ConditionFalse, synced.Reason,
			fmt.Sprintf("%s %s/%s: %s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), asParameters(claim, synced.Message)))
		return
	}
	resource.SetCondition(&st.Conditions, readyGen, common.TypeReady, ready.Status, ready.Reason, ready.Message)
}

// lastApplied is the claim generation its resource last applied: what Ready speaks for.
// status.observedGeneration alone is not it, since a stalled claim (say, one awaiting
// approval) has observed its latest generation without applying it; Ready's own alone is
// not it either, since a claim waiting for its resource says so about its current
// generation. Neither is ever below the generation last applied, so it is the lower.
func lastApplied(st *common.ClaimStatus) int64 {
	if ready := meta.FindStatusCondition(st.Conditions, common.TypeReady); ready != nil {
		return min(ready.ObservedGeneration, st.ObservedGeneration)
	}
	return st.ObservedGeneration
}
