package stack

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Condition types of an install, one per phase, plus Ready and Synced.
const (
	TypeResolved          = "Resolved"
	TypeUnpacked          = "Unpacked"
	TypeDependenciesReady = "DependenciesReady"
	TypeInstalled         = "Installed"
	TypeControllerReady   = "ControllerReady"
)

// Condition reasons of installs.
const (
	ReasonSucceeded              = "Succeeded"
	ReasonPending                = "Pending"
	ReasonInstalled              = "Installed"
	ReasonUpgraded               = "Upgraded"
	ReasonReconcileError         = "ReconcileError"
	ReasonNoRegistry             = "NoRegistry"
	ReasonRegistryUnavailable    = "RegistryUnavailable"
	ReasonCRDNotFound            = "CRDNotFound"
	ReasonPackageNotFound        = "PackageNotFound"
	ReasonInvalidPackage         = "InvalidPackage"
	ReasonUnsafePackage          = "UnsafePackage"
	ReasonScopeNotAllowed        = "PermissionScopeNotAllowed"
	ReasonConflict               = "Conflict"
	ReasonMissingNamespace       = "MissingNamespace"
	ReasonWaitingForDependencies = "WaitingForDependencies"
	ReasonWaitingForStack        = "WaitingForStack"
	ReasonUninstalling           = "Uninstalling"
	ReasonKeptCRDs               = "KeptCRDs"
	ReasonKeptModules            = "KeptModules"
	ReasonRetrying               = "Retrying"
)

// waitRetry is how soon an install waiting on something under way is looked at again;
// watches on Stacks and dependency installs usually wake it sooner.
const waitRetry = 5 * time.Second

// outcome is a reconcile error mapped to conditions and a result, in one place.
type outcome struct {
	status  metav1.ConditionStatus
	reason  string
	message string
	event   bool
	result  ctrl.Result
	err     error
}

// classify maps a reconcile error to conditions and a result: a user error waits for
// retry, a Waiting or a stale-cache write conflict polls soon, anything else is returned
// for backoff.
func classify(err error, retry time.Duration) outcome {
	if err == nil {
		return outcome{status: metav1.ConditionTrue, reason: ReasonSucceeded}
	}
	if u, ok := resource.AsUserError(err); ok {
		return outcome{status: metav1.ConditionFalse, reason: u.Reason, message: u.Message, event: true, result: ctrl.Result{RequeueAfter: retry}}
	}
	if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
		// The cache has not seen our own last write yet: try again shortly, quietly.
		return outcome{status: metav1.ConditionUnknown, reason: ReasonRetrying, message: err.Error(), result: ctrl.Result{RequeueAfter: time.Second}}
	}
	if w, ok := resource.AsWaiting(err); ok {
		return outcome{status: metav1.ConditionUnknown, reason: w.Reason, message: w.Message, result: ctrl.Result{RequeueAfter: waitRetry}}
	}
	return outcome{status: metav1.ConditionFalse, reason: ReasonReconcileError, message: err.Error(), event: true, err: err}
}

// finish derives every condition from the phases that ran and the error, emits one event
// per new problem, and writes the status.
func (r *InstallReconciler) finish(ctx context.Context, in *install, err error) (ctrl.Result, error) {
	if in.obj.GetDeletionTimestamp() != nil && err == nil {
		return ctrl.Result{}, nil // uninstalled; the object is gone
	}
	o := classify(err, r.opts.UserErrorRetry)
	st, gen := in.obj.GetInstallStatus(), in.obj.GetGeneration()
	if in.failed != "" || err == nil {
		state := metav1.ConditionTrue
		for _, p := range r.phases() {
			switch {
			case p.cond == in.failed:
				resource.SetCondition(&st.Conditions, gen, p.cond, o.status, o.reason, o.message)
				state = metav1.ConditionUnknown
			case state == metav1.ConditionTrue:
				resource.SetCondition(&st.Conditions, gen, p.cond, metav1.ConditionTrue, ReasonSucceeded, "")
			default:
				resource.SetCondition(&st.Conditions, gen, p.cond, metav1.ConditionUnknown, ReasonPending, "an earlier step has not finished")
			}
		}
	}
	ready, readyReason := metav1.ConditionFalse, o.reason
	if err == nil {
		ready, readyReason = metav1.ConditionTrue, ReasonInstalled
	}
	becameReady := resource.SetCondition(&st.Conditions, gen, common.TypeReady, ready, readyReason, o.message) && err == nil
	synced := metav1.ConditionTrue
	if o.status == metav1.ConditionFalse {
		synced = metav1.ConditionFalse
	}
	emit := resource.SetCondition(&st.Conditions, gen, common.TypeSynced, synced, o.reason, o.message) && o.event
	if res, err := patchStatus(ctx, r.client, in.obj, in.orig); err != nil || !res.IsZero() {
		return res, err
	}
	if emit {
		r.recorder.Event(in.obj, corev1.EventTypeWarning, o.reason, o.message)
	}
	if becameReady {
		r.recorder.Eventf(in.obj, corev1.EventTypeNormal, ReasonInstalled, "installed %s", st.ResolvedPackage)
	} else if before := in.orig.(installObject).GetInstallStatus().ResolvedPackage; err == nil && before != "" && before != st.ResolvedPackage {
		r.recorder.Eventf(in.obj, corev1.EventTypeNormal, ReasonUpgraded, "%s now points at %s: installed it (was %s)", in.ref, st.ResolvedPackage, before)
	}
	if err == nil && r.followsTag(in) {
		o.result.RequeueAfter = r.opts.TagRefresh
	}
	return o.result, o.err
}

// followsTag says whether the install names its package by tag, which is looked up again
// every TagRefresh; a digest and an install by CRD stay where they are.
func (r *InstallReconciler) followsTag(in *install) bool {
	_, tag := in.ref.(name.Tag)
	return tag && in.obj.GetInstallSpec().CRD == "" && r.opts.TagRefresh > 0
}

// conflictRetry is how soon a reconcile runs again after its status write lost a race.
const conflictRetry = 100 * time.Millisecond

// patchStatus writes obj's status only if nobody changed obj since orig was read, so that
// a reconcile working from a stale cache never emits a second event for one problem;
// on a conflict it asks to be run again.
func patchStatus(ctx context.Context, c client.Client, obj, orig client.Object) (ctrl.Result, error) {
	err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, nil // deleted meanwhile; nothing to report on
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("update status: %w", err)
	}
	return ctrl.Result{}, nil
}
