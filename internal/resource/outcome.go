package resource

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// Held is a change held back until someone acts: a plan awaiting approval, a refused
// destructive change. It is not retried on a timer of its own: the next edit, or the
// next periodic check, looks at it again.
type Held struct {
	// Reason is a CamelCase condition reason.
	Reason string
	// Message says what is held and how to let it through.
	Message string
	// Warning makes its event a Warning; otherwise it is Normal.
	Warning bool
	// Event is the event's reason; empty means Reason.
	Event string
}

// Error returns the message.
func (h *Held) Error() string { return h.Message }

// Holdf builds a Held announced by a Normal event.
func Holdf(reason, format string, args ...any) error {
	return &Held{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Refusef builds a Held announced by a Warning event.
func Refusef(reason, format string, args ...any) error {
	return &Held{Reason: reason, Message: fmt.Sprintf(format, args...), Warning: true}
}

// Unavailable is an error about something the reconcile depends on that does not
// answer (a target cluster, a registry): Synced=False with its reason, one event, and a
// retry at Retries.Unavailable. Other packages' error types plug into Classify through it.
type Unavailable interface {
	error
	// UnavailableReason is the CamelCase condition reason.
	UnavailableReason() string
}

// WaitRetry is how soon something waiting on work under way is looked at again, unless a
// kind says otherwise (a watch usually wakes it first).
const WaitRetry = 5 * time.Second

// Retries says how soon each kind of outcome is looked at again; zero means not on a timer.
type Retries struct {
	// Success is the periodic re-check of a reconciled object.
	Success time.Duration
	// UserError is the retry of a problem a user must fix.
	UserError time.Duration
	// Waiting is the poll of something under way.
	Waiting time.Duration
	// Held is the re-check of a held change.
	Held time.Duration
	// Unavailable is the retry of a dependency that does not answer.
	Unavailable time.Duration
}

// Outcome is what one reconcile's error means: the Synced condition, at most one event,
// and when to look again.
type Outcome struct {
	// Synced is the Synced condition's status; empty leaves the condition as it is.
	Synced metav1.ConditionStatus
	// Reason and Message of the Synced condition.
	Reason, Message string
	// EventType is the type of the event announcing a new Synced message; empty sends none.
	EventType string
	// EventReason is the event's reason; empty means Reason.
	EventReason string
	// Requeue is when to look again.
	Requeue time.Duration
	// Err goes back to the controller for a retry with backoff.
	Err error
}

// Succeeded reports whether the reconcile did everything it had to.
func (o Outcome) Succeeded() bool {
	return o.Synced == metav1.ConditionTrue && o.Reason == common.ReasonReconcileSuccess
}

// Classify maps a reconcile's error to its outcome: the one place errors become results.
func Classify(err error, retries Retries) Outcome {
	var (
		user    *UserError
		waiting *Waiting
		held    *Held
		down    Unavailable
	)
	switch {
	case err == nil:
		return Outcome{Synced: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess, Requeue: retries.Success}
	case errors.As(err, &waiting):
		return Outcome{Synced: metav1.ConditionTrue, Reason: waiting.Reason, Message: waiting.Message, Requeue: retries.Waiting}
	case errors.As(err, &held):
		o := Outcome{Synced: metav1.ConditionFalse, Reason: held.Reason, Message: held.Message, EventType: corev1.EventTypeNormal,
			EventReason: held.Event, Requeue: retries.Held}
		if held.Warning {
			o.EventType = corev1.EventTypeWarning
		}
		return o
	case errors.As(err, &user):
		return Outcome{Synced: metav1.ConditionFalse, Reason: user.Reason, Message: user.Message, EventType: corev1.EventTypeWarning, Requeue: retries.UserError}
	case errors.As(err, &down):
		return Outcome{Synced: metav1.ConditionFalse, Reason: down.UnavailableReason(), Message: down.Error(), EventType: corev1.EventTypeWarning, Requeue: retries.Unavailable}
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		// The cache has not caught up with a write yet: look again shortly, quietly.
		return Outcome{Requeue: time.Second}
	}
	return Outcome{Synced: metav1.ConditionFalse, Reason: common.ReasonReconcileError, Message: err.Error(), EventType: corev1.EventTypeWarning, Err: err}
}

// Note is an event to send once the status write that records it has landed.
type Note struct {
	// Type is Normal or Warning.
	Type string
	// Reason is the event's CamelCase reason.
	Reason string
	// Message is the event's message.
	Message string
}

// SetSynced sets the Synced condition of conds for generation gen and returns the
// outcome's event when its reason or message changed (none otherwise).
func (o Outcome) SetSynced(conds *[]metav1.Condition, gen int64) []Note {
	if o.Synced == "" || !SetCondition(conds, gen, common.TypeSynced, o.Synced, o.Reason, o.Message) || o.EventType == "" {
		return nil
	}
	reason := o.EventReason
	if reason == "" {
		reason = o.Reason
	}
	return []Note{{Type: o.EventType, Reason: reason, Message: o.Message}}
}

// Stale reports whether the outcome is only that the cache was behind a write: there is
// nothing to record, and the reconcile runs again shortly.
func (o Outcome) Stale() bool { return o.Synced == "" }

// Result is the controller result of the outcome.
func (o Outcome) Result() (ctrl.Result, error) {
	return ctrl.Result{RequeueAfter: o.Requeue}, o.Err
}
