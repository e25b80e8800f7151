package workload

import (
	"context"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	ctrl "sigs.k8s.io/controller-runtime"

	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Condition reasons of application resources.
const (
	ReasonSubmitted      = "Submitted"
	ReasonReconcileError = common.ReasonReconcileError
	ReasonSucceeded      = common.ReasonReconcileSuccess
)

// finish derives the resource's state and conditions from the reconcile's error (mapped
// by resource.Classify), Reconciling and Stalled as for claims, writes status and emits one event per new problem.
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
	submitted := resource.ReadyBecause(ReasonSubmitted, "")
	if st.ClusterRef != nil {
		submitted.Message = "submitted to cluster " + st.ClusterRef.Name
	}
	notes := o.Record(&st.Conditions, res.Generation, resource.FromOutcome(submitted))
	resource.SetProgress(&st.Conditions, &st.ObservedGeneration, res.Generation, o.Succeeded())
	return resource.Finisher{Client: r.client, Recorder: r.recorder}.Finish(ctx, res, orig, o, notes)
}
