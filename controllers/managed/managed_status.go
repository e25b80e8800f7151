package managed

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// Condition reasons of managed resources.
const (
	ReasonAvailable      = "Available"
	ReasonCreating       = "Creating"
	ReasonReconcileError = "ReconcileError"
	ReasonSucceeded      = "ReconcileSuccess"
	ReasonDeleting       = "Deleting"
)

// finish maps the reconcile's error to conditions, one event, and a result — the only
// place where errors become results. The status speaks for the generation the reconcile
// rendered (orig's): a write during the run may have refreshed mg to a newer one.
func (r *Reconciler) finish(ctx context.Context, orig, mg resource.Managed, out outcome, err error) (ctrl.Result, error) {
	st := mg.GetManagedStatus()
	gen := orig.GetGeneration()
	resource.SyncBindingPhase(mg)
	result, retErr := ctrl.Result{}, error(nil)
	switch u, user := resource.AsUserError(err); {
	case err == nil:
		now := metav1.Now()
		st.Terraform.LastPlanTime = &now
		if out.changed {
			st.Terraform.LastApplyTime = &now
		}
		st.ObservedGeneration = gen
		resource.SetCondition(&st.Conditions, gen, common.TypeReady, metav1.ConditionTrue, ReasonAvailable, "")
		resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionTrue, ReasonSucceeded, "")
		result.RequeueAfter = r.opts.DriftInterval + jitter(r.opts.DriftInterval)
		result.Priority = ptr.To(handler.LowPriority) // drift checks wait behind user changes
	case user:
		r.failed(mg, gen, u.Reason, u.Message)
		result.RequeueAfter = r.opts.UserErrorRetry
	default:
		r.failed(mg, gen, ReasonReconcileError, engine.Summary(err))
		log.FromContext(ctx).V(1).Info("terraform failed", "detail", err.Error()) // redacted by the engine
		retErr = errors.New(engine.Summary(err))                                  // the error log gets one line too
	}
	if err == nil && out.ran {
		st.Terraform.InputsHash = out.hash
	}
	if uerr := resource.PatchStatus(ctx, r.client, mg, orig); uerr != nil {
		return ctrl.Result{}, fmt.Errorf("update status: %w", uerr)
	}
	if retErr != nil {
		log.FromContext(ctx).Info("reconcile failed; retrying with backoff", "error", retErr.Error())
	}
	return result, retErr
}

// observe records that mg's current generation needs no terraform run (an edit that
// changes nothing terraform sees, such as the reclaim policy): its conditions now speak
// for that generation, so its claim knows the edit is applied.
func (r *Reconciler) observe(ctx context.Context, orig, mg resource.Managed, result ctrl.Result) (ctrl.Result, error) {
	st := mg.GetManagedStatus()
	gen := mg.GetGeneration()
	if st.ObservedGeneration == gen {
		return result, nil
	}
	st.ObservedGeneration = gen
	for i := range st.Conditions {
		st.Conditions[i].ObservedGeneration = gen
	}
	if err := resource.PatchStatus(ctx, r.client, mg, orig); err != nil {
		return ctrl.Result{}, fmt.Errorf("update status: %w", err)
	}
	return result, nil
}

// failed marks mg Synced=False (and not Ready if it never was) and emits one event per new message.
func (r *Reconciler) failed(mg resource.Managed, gen int64, reason, message string) {
	st := mg.GetManagedStatus()
	if resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionFalse, reason, message) {
		r.recorder.Event(mg, corev1.EventTypeWarning, reason, message)
	}
	if !resource.IsReady(st.Conditions) {
		resource.SetCondition(&st.Conditions, gen, common.TypeReady, metav1.ConditionFalse, ReasonCreating, "waiting for a successful apply")
	}
}

// finishDelete maps a deletion's error to a result.
func (r *Reconciler) finishDelete(ctx context.Context, mg resource.Managed, err error) (ctrl.Result, error) {
	if err == nil {
		return ctrl.Result{}, nil
	}
	reason := ReasonReconcileError
	retry := time.Duration(0)
	if u, ok := resource.AsUserError(err); ok {
		reason, retry = u.Reason, r.opts.UserErrorRetry
	}
	orig := mg.DeepCopyObject().(resource.Managed)
	r.failed(mg, mg.GetGeneration(), reason, "cannot delete: "+engine.Summary(err))
	resource.SetCondition(&mg.GetManagedStatus().Conditions, mg.GetGeneration(), common.TypeReady, metav1.ConditionFalse, ReasonDeleting, "")
	if uerr := resource.PatchStatus(ctx, r.client, mg, orig); uerr != nil {
		return ctrl.Result{}, fmt.Errorf("update status: %w", uerr)
	}
	if retry > 0 {
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	return ctrl.Result{}, err
}
