package workload

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Condition reasons of application resources.
const (
	ReasonSubmitted      = "Submitted"
	ReasonReconcileError = resource.ReasonReconcileError
	ReasonSucceeded      = resource.ReasonSucceeded
)

// finish derives the resource's state and conditions from the reconcile's error (mapped
// by resource.Classify), writes status and emits one event per new problem.
func (r *ResourceReconciler) finish(ctx context.Context, orig, res *workloadv1.KubernetesApplicationResource, err error) (ctrl.Result, error) {
	if !res.DeletionTimestamp.IsZero() && err == nil {
		return ctrl.Result{}, nil // finalizer removed; the resource is gone
	}
	o := resource.Classify(err, r.opts.Retries())
	if o.Stale() {
		return o.Result()
	}
	st := &res.Status
	_, userErr := resource.AsUserError(err)
	switch {
	case o.Succeeded():
		st.State = workloadv1.ResourceStateSubmitted
	case userErr:
		st.State = workloadv1.ResourceStateFailed
	case st.State == "" || o.Reason != ReasonReconcileError:
		st.State = workloadv1.ResourceStatePending
	}
	ready, readyReason, readyMsg := metav1.ConditionFalse, o.Reason, o.Message
	if o.Succeeded() {
		ready, readyReason, readyMsg = metav1.ConditionTrue, ReasonSubmitted, fmt.Sprintf("submitted to cluster %s", st.ClusterRef.Name)
	}
	resource.SetCondition(&st.Conditions, res.Generation, common.TypeReady, ready, readyReason, readyMsg)
	notes := o.SetSynced(&st.Conditions, res.Generation)
	return resource.Finisher{Client: r.client, Recorder: r.recorder}.Finish(ctx, res, orig, o, notes)
}
