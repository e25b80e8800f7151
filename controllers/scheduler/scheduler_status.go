package scheduler

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Reasons of the Scheduled condition.
const (
	ReasonScheduled     = "Scheduled"
	ReasonUnschedulable = "Unschedulable"
	// ReasonRescheduling (an event): the application's cluster turned unusable before
	// anything was submitted to it, and the application is placed again.
	ReasonRescheduling = "Rescheduling"
)

// retries says how soon each outcome is looked at again: an unschedulable application
// after Options.Retry (watches on clusters usually act first).
func (r *Reconciler) retries() resource.Retries {
	return resource.Retries{UserError: r.opts.Retry, Unavailable: r.opts.Retry}
}

// finish ends a reconcile through resource.Classify: a placement is recorded as
// Scheduled=True with one event; an Unschedulable (a resource.Unavailable) as
// Scheduled=False (Unschedulable) with one event per new reason; any other error is
// retried with backoff and records nothing. The write (a patch from orig, the
// application as read) takes an optimistic lock: the application controller writes
// status too.
func (r *Reconciler) finish(ctx context.Context, app, orig *workloadv1.KubernetesApplication, ref *workloadv1.ClusterReference, why string, err error) (ctrl.Result, error) {
	o := resource.Classify(err, r.retries())
	if o.Stale() || o.Err != nil {
		return o.Result()
	}
	notes := recordPlacement(app, ref, why, o)
	return resource.Finisher{Client: r.client, Recorder: r.recorder, Guarded: true}.Finish(ctx, app, orig, o, notes)
}

// recordPlacement records where the application is placed (Scheduled=True, with one
// event), or why it cannot be (Scheduled=False, with one event per new reason).
func recordPlacement(app *workloadv1.KubernetesApplication, ref *workloadv1.ClusterReference, why string, o resource.Outcome) []resource.Note {
	st := &app.Status
	if o.Succeeded() {
		st.ClusterRef, st.State = ref, workloadv1.ApplicationStateScheduled
		resource.SetCondition(&st.Conditions, app.Generation, workloadv1.TypeScheduled, metav1.ConditionTrue, ReasonScheduled, why)
		return []resource.Note{{Type: corev1.EventTypeNormal, Reason: ReasonScheduled, Message: why}}
	}
	st.State = workloadv1.ApplicationStatePending
	if resource.SetCondition(&st.Conditions, app.Generation, workloadv1.TypeScheduled, metav1.ConditionFalse, o.Reason, o.Message) {
		return []resource.Note{{Type: o.EventType, Reason: o.Reason, Message: o.Message}}
	}
	return nil
}
