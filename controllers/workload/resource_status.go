package workload

import (
	"context"
	"fmt"
	"time"

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
	ReasonUnreachable    = remote.ReasonUnreachable
	ReasonReconcileError = resource.ReasonReconcileError
	ReasonSucceeded      = resource.ReasonSucceeded
	// ReasonRemoteObjectConflict: the remote object exists and is not this object's to manage.
	ReasonRemoteObjectConflict = "RemoteObjectConflict"
	// ReasonAdopted (an event): an Object took over a remote object, as its adoptionPolicy allows.
	ReasonAdopted = "Adopted"
)

// waitRetry is how soon an object waiting for something under way is looked at again.
const waitRetry = 5 * time.Second

// retries says how soon each outcome of a workload object is looked at again.
func (o Options) retries() resource.Retries {
	return resource.Retries{Success: o.Resync, UserError: o.UserErrorRetry, Waiting: waitRetry, Unavailable: o.UnreachableRetry}
}

// finish derives the resource's state and conditions from the reconcile's error (mapped
// by resource.Classify), writes status and emits one event per new problem.
func (r *ResourceReconciler) finish(ctx context.Context, orig, res *workloadv1.KubernetesApplicationResource, err error) (ctrl.Result, error) {
	if !res.DeletionTimestamp.IsZero() && err == nil {
		return ctrl.Result{}, nil // finalizer removed; the resource is gone
	}
	o := resource.Classify(err, r.opts.retries())
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
