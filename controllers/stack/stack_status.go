package stack

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// finish sets Ready and Synced from the reconcile's error (and Reconciling or Stalled,
// as for claims), emits one event per new
// problem and writes the status. Ready means the objects exist; the dev control plane has
// no kubelet, so it does not wait for pods.
func (r *StackReconciler) finish(ctx context.Context, s, orig *stacksv1.Stack, err error) (ctrl.Result, error) {
	if !s.DeletionTimestamp.IsZero() && err == nil {
		return ctrl.Result{}, nil
	}
	o := resource.Classify(err, resource.Retries{UserError: r.opts.UserErrorRetry, Waiting: resource.WaitRetry})
	if o.Stale() {
		return o.Result()
	}
	st, gen := &s.Status, s.Generation
	deployed := stacksv1.ReasonControllerDeployed
	if s.Spec.Controller.Deployment == nil {
		deployed = stacksv1.ReasonNoController
	}
	notes := o.Record(&st.Conditions, gen, resource.FromOutcome(resource.ReadyBecause(deployed, "")))
	resource.SetProgress(&st.Conditions, &st.ObservedGeneration, gen, o.Succeeded())
	return resource.Finisher{Client: r.client, Recorder: r.recorder, Guarded: true}.Finish(ctx, s, orig, o, notes)
}
