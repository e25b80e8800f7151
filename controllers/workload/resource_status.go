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
	return resource.Finisher{Client: r.client, Recorder: r.recorder}.End(ctx, resource.Ending{Object: res, Orig: orig,
		Conditions: &res.Status.Conditions, Observed: &res.Status.ObservedGeneration, Outcome: resource.Classify(err, r.opts.Retries()),
		Ready: resource.FromOutcome(submittedReady(res)), Status: func(o *resource.Outcome) []resource.Note { setState(&res.Status, *o, err); return nil }})
}

// submittedReady is a resource's Ready once the reconcile succeeded, naming its cluster.
func submittedReady(res *workloadv1.KubernetesApplicationResource) resource.Ready {
	r := resource.ReadyBecause(ReasonSubmitted, "")
	if res.Status.ClusterRef != nil {
		r.Message = "submitted to cluster " + res.Status.ClusterRef.Name
	}
	return r
}

// setState records the resource's state: Submitted, Failed on a user error, or Pending
// while it waits.
func setState(st *workloadv1.KubernetesApplicationResourceStatus, o resource.Outcome, err error) {
	_, userErr := resource.AsUserError(err)
	switch {
	case o.Succeeded():
		st.State = workloadv1.ResourceStateSubmitted
	case userErr:
		st.State = workloadv1.ResourceStateFailed
	case st.State == "" || o.Reason != ReasonReconcileError:
		st.State = workloadv1.ResourceStatePending
	}
}
