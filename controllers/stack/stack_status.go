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
	return resource.Finisher{Client: r.client, Recorder: r.recorder, Guarded: true}.End(ctx, resource.Ending{Object: s, Orig: orig,
		Conditions: &s.Status.Conditions, Observed: &s.Status.ObservedGeneration, Outcome: o, Ready: stackReady(s)})
}

// stackReady is a Stack's Ready rule: its controller is deployed (or it has none) once
// the reconcile succeeded.
func stackReady(s *stacksv1.Stack) resource.ReadyRule {
	deployed := stacksv1.ReasonControllerDeployed
	if s.Spec.Controller.Deployment == nil {
		deployed = stacksv1.ReasonNoController
	}
	return resource.FromOutcome(resource.ReadyBecause(deployed, ""))
}
