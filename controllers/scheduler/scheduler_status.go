package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	if perr := r.client.Status().Patch(ctx, app, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); perr != nil {
		if apierrors.IsConflict(perr) || apierrors.IsNotFound(perr) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, fmt.Errorf("update status: %w", perr)
	}
	r.recorder.Event(app, corev1.EventTypeNormal, ReasonScheduled, why)
	return ctrl.Result{}, nil
}

// unschedulable records why the application has no cluster (a patch from orig, the
// application as read) and emits one event per new reason.
func (r *Reconciler) unschedulable(ctx context.Context, app, orig *workloadv1.KubernetesApplication, u *Unschedulable) (ctrl.Result, error) {
	st := &app.Status
	st.State = workloadv1.ApplicationStatePending
	if resource.SetCondition(&st.Conditions, app.Generation, workloadv1.TypeScheduled, metav1.ConditionFalse, ReasonUnschedulable, u.Reason+": "+u.Message) {
		r.recorder.Event(app, corev1.EventTypeWarning, ReasonUnschedulable, u.Message)
	}
	if perr := r.client.Status().Patch(ctx, app, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); perr != nil {
		if apierrors.IsConflict(perr) || apierrors.IsNotFound(perr) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, fmt.Errorf("update status: %w", perr)
	}
	return ctrl.Result{RequeueAfter: r.opts.Retry}, nil
}

// asUnschedulable reports whether err is (or wraps) an Unschedulable.
func asUnschedulable(err error) (*Unschedulable, bool) {
	var u *Unschedulable
	ok := errors.As(err, &u)
	return u, ok
}
