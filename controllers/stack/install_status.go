package stack

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// finish derives every condition from the phases that ran and the error (mapped by
// resource.Classify), Reconciling and Stalled as for claims, writes the status and emits
// one event per new problem, and one when a package is installed or upgraded.
func (r *InstallReconciler) finish(ctx context.Context, in *install, err error) (ctrl.Result, error) {
	if in.obj.GetDeletionTimestamp() != nil && err == nil {
		return ctrl.Result{}, nil // uninstalled; the object is gone
	}
	st, installed := in.obj.GetInstallStatus(), resource.ReadyBecause(stacksv1.ReasonInstalled, "")
	wasInstalled := isReady(st.Conditions, installed)
	return resource.Finisher{Client: r.client, Recorder: r.recorder, Guarded: true}.End(ctx, resource.Ending{Object: in.obj, Orig: in.orig,
		Conditions: &st.Conditions, Observed: &st.ObservedGeneration, Ready: resource.FromOutcome(installed),
		Outcome: resource.Classify(err, resource.Retries{UserError: r.opts.UserErrorRetry, Waiting: resource.WaitRetry}),
		Status:  func(o *resource.Outcome) []resource.Note { return r.installed(in, o, err, wasInstalled) }})
}

// installed records the phases and the package installed, and says once that a package
// was installed, or that an upgrade completed (it may take several reconciles, waiting
// for the new package's objects), against the package installed before it. A package
// named by tag is looked up again at the tag refresh.
func (r *InstallReconciler) installed(in *install, o *resource.Outcome, err error, wasInstalled bool) []resource.Note {
	st, gen := in.obj.GetInstallStatus(), in.obj.GetGeneration()
	if in.failed != "" || err == nil {
		setPhases(st, gen, r.phases(), in.failed, *o, err)
	}
	if err != nil {
		return nil
	}
	if r.followsTag(in) {
		o.Requeue = r.opts.TagRefresh
	}
	before := st.InstalledPackage
	st.InstalledPackage = st.ResolvedPackage
	switch {
	case before != "" && before != st.ResolvedPackage:
		return []resource.Note{{Type: corev1.EventTypeNormal, Reason: stacksv1.ReasonUpgraded,
			Message: fmt.Sprintf("%s now points at %s: installed it (was %s)", in.ref, st.ResolvedPackage, before)}}
	case !wasInstalled:
		return []resource.Note{{Type: corev1.EventTypeNormal, Reason: stacksv1.ReasonInstalled, Message: "installed " + st.ResolvedPackage}}
	}
	return nil
}

// isReady reports whether conds hold exactly the Ready r.
func isReady(conds []metav1.Condition, r resource.Ready) bool {
	c := meta.FindStatusCondition(conds, common.TypeReady)
	return c != nil && c.Status == r.Status && c.Reason == r.Reason && c.Message == r.Message
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
