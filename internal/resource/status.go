package resource

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// conflictRetry is how soon a reconcile runs again after its guarded status write lost a race.
const conflictRetry = time.Second

// PatchStatus writes obj's status as a merge patch from orig and sends nothing when the
// patch is empty, so a reconcile that changed nothing costs the API server no request.
// An object deleted meanwhile is not an error. With guarded, the patch applies only to
// the version orig was read at (for conditions another controller writes too), and a
// lost race comes back as a Conflict error.
func PatchStatus(ctx context.Context, c client.Client, obj, orig client.Object, guarded bool) error {
	if Unchanged(obj, orig) {
		return nil // a guarded patch would carry the resourceVersion even when empty
	}
	var patch client.Patch = client.MergeFrom(orig)
	if guarded {
		patch = client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
	}
	data, err := patch.Data(obj)
	if err != nil {
		return fmt.Errorf("compute status patch: %w", err)
	}
	err = c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}

// Unchanged reports whether obj is still orig: their merge patch is empty.
func Unchanged(obj, orig client.Object) bool {
	data, err := client.MergeFrom(orig).Data(obj)
	return err == nil && string(data) == "{}"
}

// Finisher ends reconciles the one way. The caller records the outcome with
// Outcome.SetSynced and derives its other conditions from it; Finish then writes the
// status once and sends the notes (events) only when the write landed, so a reconcile
// that lost a race to a newer one stays quiet.
type Finisher struct {
	// Client writes the status.
	Client client.Client
	// Recorder sends the events; the zero Recorder sends none.
	Recorder Recorder
	// Guarded writes with an optimistic lock, for objects whose conditions another
	// controller writes too.
	Guarded bool
}

// Finish writes obj's status from orig, sends notes and returns o's result. A guarded
// write that lost a race asks to run again soon, quietly.
func (f Finisher) Finish(ctx context.Context, obj, orig client.Object, o Outcome, notes []Note) (ctrl.Result, error) {
	if err := PatchStatus(ctx, f.Client, obj, orig, f.Guarded); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	for _, n := range notes {
		f.Recorder.Event(obj, n.Type, n.Reason, n.Message)
	}
	return o.Result()
}

// Ending is how one reconcile of an object ends: its outcome and the kind's rules, from
// which End derives the status and writes it once.
type Ending struct {
	// Object is the object as the reconcile leaves it, and Orig as it read it.
	Object, Orig client.Object
	// Conditions and Observed are the object's status conditions and observedGeneration.
	Conditions *[]metav1.Condition
	Observed   *int64
	// Outcome is the reconcile's, from Classify.
	Outcome Outcome
	// Ready is the kind's Ready rule; nil when the kind has no Ready of its own.
	Ready ReadyRule
	// Status records what else the kind derives from the outcome (its own fields and
	// conditions, after Synced, Ready and the progress conditions, which it may refine:
	// Stalled, say), may adjust the outcome's requeue, and returns its events; nil
	// records nothing more.
	Status func(o *Outcome) []Note
	// Applied says whether the generation counts as applied (SetProgress); nil means the
	// outcome succeeded.
	Applied func(o Outcome) bool
}

// End ends a reconcile the one way: a stale outcome records nothing; otherwise Synced,
// Ready by the kind's rule, the progress conditions and the kind's own status are
// recorded, the status written once, and the events sent once the write landed.
func (f Finisher) End(ctx context.Context, e Ending) (ctrl.Result, error) {
	o := e.Outcome
	if o.Stale() {
		return o.Result()
	}
	gen := e.Object.GetGeneration()
	notes := o.Record(e.Conditions, gen, e.Ready)
	applied := o.Succeeded()
	if e.Applied != nil {
		applied = e.Applied(o)
	}
	SetProgress(e.Conditions, e.Observed, gen, applied)
	if e.Status != nil {
		notes = append(notes, e.Status(&o)...)
	}
	return f.Finish(ctx, e.Object, e.Orig, o, notes)
}
