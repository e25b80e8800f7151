package workload

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// Condition reasons of workloads.
const (
	ReasonSubmitted      = "Submitted"
	ReasonUnreachable    = "ClusterUnreachable"
	ReasonReconcileError = "ReconcileError"
	ReasonSucceeded      = "ReconcileSuccess"
	// ReasonRemoteObjectConflict: the remote object exists and is not this object's to manage.
	ReasonRemoteObjectConflict = "RemoteObjectConflict"
	// ReasonAdopted (an event): an Object took over a remote object, as its adoptionPolicy allows.
	ReasonAdopted = "Adopted"
)

// waitRetry is how soon an object waiting for something under way is looked at again.
const waitRetry = 5 * time.Second

// outcome is what one reconcile's error means for state, conditions and requeueing.
type outcome struct {
	synced    metav1.ConditionStatus
	reason    string
	message   string
	event     bool
	requeue   time.Duration
	retErr    error
	succeeded bool
	failed    bool
}

// classify maps a reconcile error to its outcome; the one place errors become results.
func classify(err error, opts Options) outcome {
	if err == nil {
		return outcome{synced: metav1.ConditionTrue, reason: ReasonSucceeded, requeue: opts.Resync, succeeded: true}
	}
	if w, ok := resource.AsWaiting(err); ok {
		return outcome{synced: metav1.ConditionTrue, reason: w.Reason, message: w.Message, requeue: waitRetry}
	}
	if u, ok := resource.AsUserError(err); ok {
		return outcome{synced: metav1.ConditionFalse, reason: u.Reason, message: u.Message, event: true, requeue: opts.UserErrorRetry, failed: true}
	}
	if u, ok := remote.AsUnreachable(err); ok {
		return outcome{synced: metav1.ConditionFalse, reason: ReasonUnreachable, message: u.Error(), event: true, requeue: opts.UnreachableRetry}
	}
	return outcome{synced: metav1.ConditionFalse, reason: ReasonReconcileError, message: err.Error(), event: true, retErr: err}
}

// finish derives the resource's state and conditions from the reconcile's error, emits
// one event per new problem and writes status.
func (r *ResourceReconciler) finish(ctx context.Context, res *workloadv1.KubernetesApplicationResource, err error) (ctrl.Result, error) {
	if !res.DeletionTimestamp.IsZero() && err == nil {
		return ctrl.Result{}, nil // finalizer removed; the resource is gone
	}
	o := classify(err, r.opts)
	before := res.Status.DeepCopy()
	st := &res.Status
	switch {
	case o.succeeded:
		st.State = workloadv1.ResourceStateSubmitted
	case o.failed:
		st.State = workloadv1.ResourceStateFailed
	case st.State == "" || o.reason != ReasonReconcileError:
		st.State = workloadv1.ResourceStatePending
	}
	ready, readyReason, readyMsg := metav1.ConditionFalse, o.reason, o.message
	if o.succeeded {
		ready, readyReason, readyMsg = metav1.ConditionTrue, ReasonSubmitted, fmt.Sprintf("submitted to cluster %s", st.ClusterRef.Name)
	}
	resource.SetCondition(&st.Conditions, res.Generation, common.TypeReady, ready, readyReason, readyMsg)
	if resource.SetCondition(&st.Conditions, res.Generation, common.TypeSynced, o.synced, o.reason, o.message) && o.event {
		r.recorder.Event(res, corev1.EventTypeWarning, o.reason, o.message)
	}
	if equality.Semantic.DeepEqual(before, st) {
		return ctrl.Result{RequeueAfter: o.requeue}, o.retErr
	}
	if perr := r.client.Status().Update(ctx, res); perr != nil {
		if apierrors.IsConflict(perr) || apierrors.IsNotFound(perr) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, fmt.Errorf("update status: %w", perr)
	}
	return ctrl.Result{RequeueAfter: o.requeue}, o.retErr
}
