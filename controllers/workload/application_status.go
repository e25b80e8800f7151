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

// finish derives the application's state and counts from its resources and the
// reconcile's error (Reconciling until every resource is submitted, Stalled when they
// failed for good, as for claims), and writes status with an optimistic lock (the scheduler writes
// status too).
func (r *ApplicationReconciler) finish(ctx context.Context, app *workloadv1.KubernetesApplication, owned map[string]*workloadv1.KubernetesApplicationResource, err error) (ctrl.Result, error) {
	if !app.DeletionTimestamp.IsZero() && err == nil {
		return ctrl.Result{}, nil
	}
	orig := app.DeepCopy()
	st := &app.Status
	o := resource.Classify(err, r.opts.Retries())
	if o.Stale() {
		return o.Result()
	}
	if owned != nil {
		st.State, st.DesiredResources, st.SubmittedResources = applicationState(app, owned)
	}
	if !app.DeletionTimestamp.IsZero() {
		st.State = workloadv1.ApplicationStatePending
	}
	ready, reason, msg := metav1.ConditionFalse, string(st.State), fmt.Sprintf("%d of %d resources submitted", st.SubmittedResources, st.DesiredResources)
	if st.State == workloadv1.ApplicationStateSubmitted {
		ready = metav1.ConditionTrue
	}
	resource.SetCondition(&st.Conditions, app.Generation, common.TypeReady, ready, reason, msg)
	notes := o.SetSynced(&st.Conditions, app.Generation)
	if o.Succeeded() && st.State == workloadv1.ApplicationStateFailed { // its resources' Stalled, as a claim's
		resource.MarkStalled(&st.Conditions, &st.ObservedGeneration, app.Generation, reason, msg+"; "+failedResources)
	} else {
		resource.SetProgress(&st.Conditions, &st.ObservedGeneration, app.Generation, o.Succeeded() && ready == metav1.ConditionTrue)
	}
	if o.Succeeded() {
		o.Requeue = 0 // resources report back through the Owns watch
	}
	// The scheduler writes status too: the lock keeps either write from undoing the other's.
	return resource.Finisher{Client: r.client, Recorder: r.recorder, Guarded: true}.Finish(ctx, app, orig, o, notes)
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
