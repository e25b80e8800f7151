package workload

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// ReasonAvailable says the remote object exists and every connection detail was written.
const ReasonAvailable = "Available"

// finish derives the Object's conditions from the reconcile's error and writes status
// (status.atProvider was filled by observe; only this controller writes status).
func (r *ObjectReconciler) finish(ctx context.Context, o *kubernetesv1.Object, err error) (ctrl.Result, error) {
	if !o.DeletionTimestamp.IsZero() && err == nil {
		return ctrl.Result{}, nil
	}
	out := classify(err, r.opts)
	st := &o.Status
	ready, reason, msg := metav1.ConditionFalse, out.reason, out.message
	if out.succeeded {
		ready, reason, msg = metav1.ConditionTrue, ReasonAvailable, ""
	}
	resource.SetCondition(&st.Conditions, o.Generation, common.TypeReady, ready, reason, msg)
	if resource.SetCondition(&st.Conditions, o.Generation, common.TypeSynced, out.synced, out.reason, out.message) && out.event {
		r.recorder.Event(o, corev1.EventTypeWarning, out.reason, out.message)
	}
	if perr := r.client.Status().Update(ctx, o); perr != nil {
		if apierrors.IsConflict(perr) || apierrors.IsNotFound(perr) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, fmt.Errorf("update status: %w", perr)
	}
	if !out.succeeded {
		return ctrl.Result{RequeueAfter: out.requeue}, out.retErr
	}
	return ctrl.Result{RequeueAfter: r.opts.Resync}, nil
}
