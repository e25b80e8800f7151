package stack

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Reasons of a Stack's Ready condition.
const (
	ReasonControllerDeployed = "ControllerDeployed"
	ReasonNoController       = "NoController"
)

// finish sets Ready and Synced from the reconcile's error, emits one event per new
// problem and writes the status. Ready means the objects exist; the dev control plane has
// no kubelet, so it does not wait for pods.
func (r *StackReconciler) finish(ctx context.Context, s, orig *stacksv1.Stack, err error) (ctrl.Result, error) {
	if !s.DeletionTimestamp.IsZero() && err == nil {
		return ctrl.Result{}, nil
	}
	o := classify(err, r.opts.UserErrorRetry)
	st, gen := &s.Status, s.Generation
	if err == nil {
		reason := ReasonControllerDeployed
		if s.Spec.Controller.Deployment == nil {
			reason = ReasonNoController
		}
		resource.SetCondition(&st.Conditions, gen, common.TypeReady, metav1.ConditionTrue, reason, "")
	} else {
		resource.SetCondition(&st.Conditions, gen, common.TypeReady, metav1.ConditionFalse, o.reason, o.message)
	}
	synced := metav1.ConditionTrue
	if o.status == metav1.ConditionFalse {
		synced = metav1.ConditionFalse
	}
	emit := resource.SetCondition(&st.Conditions, gen, common.TypeSynced, synced, o.reason, o.message) && o.event
	if res, err := patchStatus(ctx, r.client, s, orig); err != nil || !res.IsZero() {
		return res, err
	}
	if emit {
		r.recorder.Event(s, corev1.EventTypeWarning, o.reason, o.message)
	}
	return o.result, o.err
}
