package stack

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// finish derives every condition from the phases that ran and the error (mapped by
// resource.Classify), Reconciling and Stalled as for claims, writes the status and emits one event per new problem.
func (r *InstallReconciler) finish(ctx context.Context, in *install, err error) (ctrl.Result, error) {
	if in.obj.GetDeletionTimestamp() != nil && err == nil {
		return ctrl.Result{}, nil // uninstalled; the object is gone
	}
	o := resource.Classify(err, resource.Retries{UserError: r.opts.UserErrorRetry, Waiting: resource.WaitRetry})
	if o.Stale() {
		return o.Result()
	}
	st, gen := in.obj.GetInstallStatus(), in.obj.GetGeneration()
	if in.failed != "" || err == nil {
		setPhases(st, gen, r.phases(), in.failed, o, err)
	}
	becameReady := o.Ready(resource.ReadyBecause(stacksv1.ReasonInstalled, "")).Set(&st.Conditions, gen) && err == nil
	notes := o.SetSynced(&st.Conditions, gen)
	resource.SetProgress(&st.Conditions, &st.ObservedGeneration, gen, err == nil)
	// an upgrade may take several reconciles (waiting for the new package's objects):
	// it is told once it completes, against the package installed before it
	before := st.InstalledPackage
	if err == nil {
		st.InstalledPackage = st.ResolvedPackage
	}
	switch {
	case err == nil && before != "" && before != st.ResolvedPackage:
		notes = append(notes, resource.Note{Type: corev1.EventTypeNormal, Reason: stacksv1.ReasonUpgraded,
			Message: fmt.Sprintf("%s now points at %s: installed it (was %s)", in.ref, st.ResolvedPackage, before)})
	case becameReady:
		notes = append(notes, resource.Note{Type: corev1.EventTypeNormal, Reason: stacksv1.ReasonInstalled, Message: "installed " + st.ResolvedPackage})
	}
	if err == nil && r.followsTag(in) {
		o.Requeue = r.opts.TagRefresh
	}
	return resource.Finisher{Client: r.client, Recorder: r.recorder, Guarded: true}.Finish(ctx, in.obj, in.orig, o, notes)
}

// setPhases sets one condition per phase: those before the failed one succeeded, the
// failed one says why (Unknown while it waits), the later ones are pending.
func setPhases(st *stacksv1.StackInstallStatus, gen int64, phases []phase, failed string, o resource.Outcome, err error) {
	failedStatus := o.Synced
	if _, waiting := resource.AsWaiting(err); waiting {
		failedStatus = metav1.ConditionUnknown
	}
	state := metav1.ConditionTrue
	for _, p := range phases {
		switch {
		case p.cond == failed:
			resource.SetCondition(&st.Conditions, gen, p.cond, failedStatus, o.Reason, o.Message)
			state = metav1.ConditionUnknown
		case state == metav1.ConditionTrue:
			resource.SetCondition(&st.Conditions, gen, p.cond, metav1.ConditionTrue, stacksv1.ReasonSucceeded, "")
		default:
			resource.SetCondition(&st.Conditions, gen, p.cond, metav1.ConditionUnknown, stacksv1.ReasonPending, "an earlier step has not finished")
		}
	}
}

// followsTag says whether the install names its package by tag, which is looked up again
// every TagRefresh; a digest and an install by CRD stay where they are.
func (r *InstallReconciler) followsTag(in *install) bool {
	_, tag := in.ref.(name.Tag)
	return tag && in.obj.GetInstallSpec().CRD == "" && r.opts.TagRefresh > 0
}
