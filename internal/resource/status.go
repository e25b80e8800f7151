package resource

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// Recorder sends the events.
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
