package workload

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// finish derives the application's state and counts from its resources and the
// reconcile's error (Reconciling until every resource is submitted, Stalled when they
// failed for good, as for claims), and writes status with an optimistic lock (the scheduler writes
// status too).
func (r *ApplicationReconciler) finish(ctx context.Context, app *workloadv1.KubernetesApplication, owned map[string]*workloadv1.KubernetesApplicationResource, err error) (ctrl.Result, error) {
	if !app.DeletionTimestamp.IsZero() && err == nil {
		return ctrl.Result{}, nil
	}
	orig, ready := app.DeepCopy(), recordState(app, owned)
	// The scheduler writes status too: the lock keeps either write from undoing the other's.
	return resource.Finisher{Client: r.client, Recorder: r.recorder, Guarded: true}.End(ctx, resource.Ending{Object: app, Orig: orig,
		Conditions: &app.Status.Conditions, Observed: &app.Status.ObservedGeneration, Outcome: resource.Classify(err, r.opts.Retries()),
		Ready:   func(resource.Outcome, []metav1.Condition) (resource.Ready, bool) { return ready, true },
		Applied: func(o resource.Outcome) bool { return o.Succeeded() && ready.Status == metav1.ConditionTrue },
		Status:  func(o *resource.Outcome) []resource.Note { settle(app, o, ready); return nil }})
}

// recordState records the application's state and counts, from its resources, and
// returns its Ready: True once every resource is submitted.
func recordState(app *workloadv1.KubernetesApplication, owned map[string]*workloadv1.KubernetesApplicationResource) resource.Ready {
	st := &app.Status
	if owned != nil {
		st.State, st.DesiredResources, st.SubmittedResources = applicationState(app, owned)
	}
	if !app.DeletionTimestamp.IsZero() {
		st.State = workloadv1.ApplicationStatePending
	}
	msg := fmt.Sprintf("%d of %d resources submitted", st.SubmittedResources, st.DesiredResources)
	if st.State == workloadv1.ApplicationStateSubmitted {
		return resource.ReadyBecause(string(st.State), msg)
	}
	return resource.NotReady(string(st.State), msg)
}

// settle marks an application whose resources failed for good Stalled, as a claim whose
// resource failed; a success needs no requeue, as resources report back through the Owns
// watch.
func settle(app *workloadv1.KubernetesApplication, o *resource.Outcome, ready resource.Ready) {
	if !o.Succeeded() {
		return
	}
	o.Requeue = 0
	if app.Status.State == workloadv1.ApplicationStateFailed {
		resource.MarkStalled(&app.Status.Conditions, &app.Status.ObservedGeneration, app.Generation, ready.Reason, ready.Message+"; "+failedResources)
	}
}

// failedResources is what a Failed application's message adds.
const failedResources = "its resources failed: kubectl get kubernetesapplicationresources says why"

// applicationState counts desired and submitted resources and names the state.
func applicationState(app *workloadv1.KubernetesApplication, owned map[string]*workloadv1.KubernetesApplicationResource) (workloadv1.ApplicationState, int, int) {
	desired, submitted, failed := len(app.Spec.ResourceTemplates), 0, 0
	for _, t := range app.Spec.ResourceTemplates {
		res, ok := owned[t.Metadata.Name]
		switch {
		case !ok:
		case res.Status.State == workloadv1.ResourceStateSubmitted:
			submitted++
		case res.Status.State == workloadv1.ResourceStateFailed:
			failed++
		}
	}
	switch {
	case app.Status.ClusterRef == nil:
		return workloadv1.ApplicationStatePending, desired, submitted
	case submitted == desired:
		return workloadv1.ApplicationStateSubmitted, desired, submitted
	case submitted > 0:
		return workloadv1.ApplicationStatePartiallySubmitted, desired, submitted
	case failed > 0:
		return workloadv1.ApplicationStateFailed, desired, submitted
	}
	return workloadv1.ApplicationStateScheduled, desired, submitted
}
