package workload

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// ReasonAvailable says the external resource exists and every connection detail was written.
const ReasonAvailable = "Available"

// native is what the reconcilers of native (non-Terraform) managed kinds share: status,
// conditions and the connection Secret.
type native struct {
	client   client.Client
	targets  *Targets
	opts     Options
	recorder resource.Recorder
}

// finish derives a native managed resource's binding phase and conditions from the
// reconcile's error and writes status (status.atProvider was filled by the reconcile;
// only this controller writes status, apart from the claim reconciler's Released).
func (r *native) finish(ctx context.Context, mg resource.Managed, err error) (ctrl.Result, error) {
	if !mg.GetDeletionTimestamp().IsZero() && err == nil {
		return ctrl.Result{}, nil
	}
	out := classify(err, r.opts)
	resource.SyncBindingPhase(mg)
	st := mg.GetManagedStatus()
	gen := mg.GetGeneration()
	ready, reason, msg := metav1.ConditionFalse, out.reason, out.message
	if out.succeeded {
		ready, reason, msg = metav1.ConditionTrue, ReasonAvailable, ""
	}
	resource.SetCondition(&st.Conditions, gen, common.TypeReady, ready, reason, msg)
	if resource.SetCondition(&st.Conditions, gen, common.TypeSynced, out.synced, out.reason, out.message) && out.event {
		r.recorder.Event(mg, corev1.EventTypeWarning, out.reason, out.message)
	}
	if perr := r.client.Status().Update(ctx, mg); perr != nil {
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
