package scheduler

import (
	"context"
	"errors"

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

// scheduled records the placement (a patch from orig, the application as read) with an
// optimistic lock: the application controller writes status too.
func (r *Reconciler) scheduled(ctx context.Context, app, orig *workloadv1.KubernetesApplication, ref *workloadv1.ClusterReference, why string) (ctrl.Result, error) {
	st := &app.Status
	st.ClusterRef, st.State = ref, workloadv1.ApplicationStateScheduled
	resource.SetCondition(&st.Conditions, app.Generation, workloadv1.TypeScheduled, metav1.ConditionTrue, ReasonScheduled, why)
	notes := []resource.Note{{Type: corev1.EventTypeNormal, Reason: ReasonScheduled, Message: why}}
	return r.finisher().Finish(ctx, app, orig, resource.Outcome{}, notes)
}

// unschedulable records why the application has no cluster (a patch from orig, the
// application as read) and emits one event per new reason.
func (r *Reconciler) unschedulable(ctx context.Context, app, orig *workloadv1.KubernetesApplication, u *Unschedulable) (ctrl.Result, error) {
	st := &app.Status
	st.State = workloadv1.ApplicationStatePending
	var notes []resource.Note
	if resource.SetCondition(&st.Conditions, app.Generation, workloadv1.TypeScheduled, metav1.ConditionFalse, ReasonUnschedulable, u.Reason+": "+u.Message) {
		notes = []resource.Note{{Type: corev1.EventTypeWarning, Reason: ReasonUnschedulable, Message: u.Message}}
	}
	return r.finisher().Finish(ctx, app, orig, resource.Outcome{Requeue: r.opts.Retry}, notes)
}

// finisher writes applications' status with an optimistic lock: the application
// controller writes it too.
func (r *Reconciler) finisher() resource.Finisher {
	return resource.Finisher{Client: r.client, Recorder: r.recorder, Guarded: true}
}

// asUnschedulable reports whether err is (or wraps) an Unschedulable.
func asUnschedulable(err error) (*Unschedulable, bool) {
	var u *Unschedulable
	ok := errors.As(err, &u)
	return u, ok
}
