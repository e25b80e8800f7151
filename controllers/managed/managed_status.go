package managed

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// finish maps the reconcile's error to conditions, one event, and a result — the only
// place where errors become results.
func (r *Reconciler) finish(ctx context.Context, orig, mg resource.Managed, run *Run, err error) (ctrl.Result, error) {
	return r.finishWith(ctx, r.finisher(), orig, mg, run, err)
}

// finishUnmarked is finish for an Apply that was to mark its generation Reconciling
// (markApplying) and ended before its first progress report. Its one status write is
// guarded, as the mark's would have been: a reconcile that read a copy older than the
// last status write loses (and runs again from a fresh copy) rather than putting back
// the conditions that write replaced.
func (r *Reconciler) finishUnmarked(ctx context.Context, orig, mg resource.Managed, run *Run, err error) (ctrl.Result, error) {
	f := r.finisher()
	f.Guarded = true
	return r.finishWith(ctx, f, orig, mg, run, err)
}

// statusBase is the base of a status write of mg from orig. A guarded one is at mg's
// resourceVersion: the one the run read, or wrote itself (its progress, or the record of
// a create interrupted).
func statusBase(orig, mg resource.Managed, guarded bool) resource.Managed {
	if !guarded {
		return orig
	}
	base := orig.DeepCopyObject().(resource.Managed)
	base.SetResourceVersion(mg.GetResourceVersion())
	return base
}

// finishWith records the outcome of err and run in mg's status and writes it with f.
func (r *Reconciler) finishWith(ctx context.Context, f resource.Finisher, orig, mg resource.Managed, run *Run, err error) (ctrl.Result, error) {
	o := r.outcome(ctx, mg, err)
	if run == nil && o.Stale() {
		return o.Result() // the cache was behind a write, and nothing ran: nothing to record
	}
	notes := r.record(orig, mg, run, o)
	result, rerr := f.Finish(ctx, mg, statusBase(orig, mg, f.Guarded), o, notes)
	return r.result(ctx, result, rerr, o)
}

// record records the outcome o, and the record of the run if one ran, in mg's status:
// the run's Terraform status, Synced, Ready by the kind's rule (Missing when the run left
// the external resource deleted), the progress conditions, and the first time Ready. The
// status speaks for the generation the reconcile started from (orig's): a write during
// the run may have refreshed mg to a newer one. It returns the events to send.
func (r *Reconciler) record(orig, mg resource.Managed, run *Run, o resource.Outcome) []resource.Note {
	gen, st := orig.GetGeneration(), mg.GetManagedStatus()
	resource.SyncBindingPhase(mg)
	if run != nil {
		run.write(st, gen, o.Succeeded())
	}
	notes := o.Record(&st.Conditions, gen, r.kind.readyRule())
	missing := run.missing()
	if missing != "" {
		resource.NotReady(common.ReasonMissing, missing).Set(&st.Conditions, gen)
	}
	resource.SetProgress(&st.Conditions, &st.ObservedGeneration, gen, o.Succeeded() && (resource.IsReady(st.Conditions) || missing != ""))
	if r.kind.firstReady(orig.GetManagedStatus(), st) {
		resource.ObserveFirstReady(resource.ManagedFamily, r.gvk(mg), mg.GetCreationTimestamp().Time)
	}
	return notes
}

// result is the reconcile's result: a failed write is logged and retried with backoff,
// and a resource with nothing to do for its user (a success, a plan awaiting approval)
// waits behind user changes at its next periodic check.
func (r *Reconciler) result(ctx context.Context, result ctrl.Result, err error, o resource.Outcome) (ctrl.Result, error) {
	if err != nil {
		log.FromContext(ctx).Info("reconcile failed; retrying with backoff", "error", err.Error())
	}
	if o.Succeeded() || o.Reason == common.ReasonAwaitingApproval || o.Reason == common.ReasonProviderUpgrade {
		result.Priority = ptr.To(handler.LowPriority)
	}
	return result, err
}

// readyRule is the kind's Ready rule: see Kind.KeepsReady.
func (k Kind) readyRule() resource.ReadyRule {
	if k.KeepsReady {
		return resource.KeepsReady(resource.Available(), resource.Creating("waiting for a successful apply"))
	}
	return resource.FromOutcome(resource.Available())
}

// firstReady reports whether a reconcile that found status before and leaves after
// makes a resource Ready for the first time. A kind that keeps Ready (Terraform) is
// Creating until its first success; any other may lose Ready (its target cluster does not
// answer) and regain it, which is no first time: it counts only while it never had a
// generation applied or stalled.
func (k Kind) firstReady(before, after *common.ManagedStatus) bool {
	if !resource.IsReady(after.Conditions) {
		return false
	}
	ready := meta.FindStatusCondition(before.Conditions, common.TypeReady)
	switch {
	case ready == nil:
		return true
	case ready.Status == metav1.ConditionTrue:
		return false
	case k.KeepsReady:
		return ready.Reason == common.ReasonCreating
	}
	return before.ObservedGeneration == 0
}

// gvk is mg's kind, from the scheme (objects read from the cache carry none).
func (r *Reconciler) gvk(mg resource.Managed) schema.GroupVersionKind {
	gvk, err := apiutil.GVKForObject(mg, r.client.Scheme())
	if err != nil {
		return schema.GroupVersionKind{Kind: r.kind.Name}
	}
	return gvk
}

// outcome classifies err by the kind's retries, reporting a streak of stale outcomes,
// and shortens an unexpected error by the kind's Summary.
func (r *Reconciler) outcome(ctx context.Context, mg resource.Managed, err error) resource.Outcome {
	o := r.streaks.Classify(mg.GetUID(), err, r.kind.Retries(mg))
	if o.Err != nil && r.kind.Summary != nil {
		o.Message = r.kind.Summary(err)
		o.Err = errors.New(o.Message)                                             // the error log gets one line too
		log.FromContext(ctx).V(1).Info("reconcile failed", "detail", err.Error()) // redacted by the kind
	}
	return o
}

// settled ends a reconcile that found nothing changed (Observation.Settled): the
// conditions stand and now speak for mg's current generation, so that a claim knows an
// edit that changes nothing external (such as the reclaim policy) is applied, and kstatus
// reads the edit as applied (or stalled, as before it).
func (r *Reconciler) settled(ctx context.Context, orig, mg resource.Managed, after time.Duration) (ctrl.Result, error) {
	result := ctrl.Result{RequeueAfter: after, Priority: ptr.To(handler.LowPriority)}
	st := mg.GetManagedStatus()
	gen := mg.GetGeneration()
	if st.ObservedGeneration == gen && !resource.Applying(st.Conditions, gen) {
		return result, nil
	}
	for i := range st.Conditions {
		st.Conditions[i].ObservedGeneration = gen
	}
	resource.SetProgress(&st.Conditions, &st.ObservedGeneration, gen,
		meta.IsStatusConditionTrue(st.Conditions, common.TypeSynced) && resource.IsReady(st.Conditions))
	if err := resource.PatchStatus(ctx, r.client, mg, orig, false); err != nil {
		return ctrl.Result{}, err
	}
	return result, nil
}

// finishDelete maps a deletion's error to a result: Synced says why the deletion cannot
// go on, Ready says Deleting.
func (r *Reconciler) finishDelete(ctx context.Context, mg resource.Managed, err error) (ctrl.Result, error) {
	if err == nil {
		return ctrl.Result{}, nil
	}
	orig, o, conds := mg.DeepCopyObject().(resource.Managed), r.deleteOutcome(mg, err), &mg.GetManagedStatus().Conditions
	notes := o.SetSynced(conds, mg.GetGeneration())
	resource.Deleting().Set(conds, mg.GetGeneration())
	return r.finisher().Finish(ctx, mg, orig, o, notes)
}

// deleteOutcome is the outcome of a deletion that failed with err, its message saying
// that the resource cannot be deleted, and why (shortened by the kind's Summary).
func (r *Reconciler) deleteOutcome(mg resource.Managed, err error) resource.Outcome {
	o := resource.Classify(err, r.kind.Retries(mg))
	msg := err.Error()
	if r.kind.Summary != nil {
		msg = r.kind.Summary(err)
	}
	o.Message = "cannot delete: " + msg
	if o.Err != nil {
		o.Err = errors.New(o.Message)
	}
	return o
}

// markDue says whether an Apply of mg, about to start, is to mark mg Reconciling: a kind
// whose applies are slow (SlowApply), applying a generation not applied yet, nor marked
// (a drift check marks nothing).
func (r *Reconciler) markDue(mg resource.Managed) bool {
	st := mg.GetManagedStatus()
	gen := mg.GetGeneration()
	return r.kind.SlowApply && st.ObservedGeneration != gen && !resource.Applying(st.Conditions, gen)
}

// markApplying records in mg's conditions that its generation is being applied
// (Reconciling=True), so that kstatus sees an edit, or a create, in progress while
// terraform runs rather than only once it ends. It rides on the Apply's first progress
// report, written once terraform has run a while: an Apply quicker than that goes from
// its start to its outcome in one status write, and so does its claim. A condition the
// report sets already (TerraformRunning) stands.
func markApplying(mg resource.Managed) {
	st, gen := mg.GetManagedStatus(), mg.GetGeneration()
	if !resource.Applying(st.Conditions, gen) {
		resource.MarkReconciling(&st.Conditions, gen)
	}
	markFirstCreate(&st.Conditions, gen)
}

// markFirstCreate gives a resource that has no Ready and Synced yet (its first apply is
// about to start) Ready=False, reason Creating, and Synced=True: its spec was accepted
// and is being applied, as Crossplane says of a create under way.
func markFirstCreate(conds *[]metav1.Condition, gen int64) {
	if meta.FindStatusCondition(*conds, common.TypeReady) == nil {
		resource.Creating("the external resource is being created").Set(conds, gen)
	}
	if meta.FindStatusCondition(*conds, common.TypeSynced) == nil {
		resource.SetCondition(conds, gen, common.TypeSynced, metav1.ConditionTrue, common.ReasonReconcileSuccess, "")
	}
}

// writeProgress writes mg's status as it stands in the middle of an Apply (see
// Progressing) and returns the status now stored, the base of the reconcile's next
// status write. mg itself is left as the run read it: the answer may carry a newer
// generation's spec, edited while terraform runs, which this run does not apply.
// The write that marks the Apply (markApplying) is guarded: a reconcile that read a copy
// older than the last status write (a lagging cache) would put back the conditions that
// write replaced, such as a Ready the last apply set; it loses instead (a Conflict).
func (r *Reconciler) writeProgress(ctx context.Context, orig, mg resource.Managed, marks bool) (resource.Managed, error) {
	written := mg.DeepCopyObject().(resource.Managed)
	if err := resource.PatchStatus(ctx, r.client, written.DeepCopyObject().(resource.Managed), statusBase(orig, mg, marks), marks); err != nil {
		return orig, err
	}
	return written, nil
}

// finisher writes managed resources' status, unguarded: only this reconciler writes
// their conditions (the claim reconciler writes bindingPhase alone).
func (r *Reconciler) finisher() resource.Finisher {
	return resource.Finisher{Client: r.client, Recorder: r.kind.Recorder}
}
