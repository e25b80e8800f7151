package resource

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// Ready is the Ready condition an object is to get: its status, reason and message.
type Ready struct {
	// Status is True or False.
	Status metav1.ConditionStatus
	// Reason is a CamelCase condition reason.
	Reason string
	// Message says more; empty when the reason says it all.
	Message string
}

// Available is a managed resource's Ready=True: the external resource exists and every
// connection detail was written.
func Available() Ready { return ReadyBecause(common.ReasonAvailable, "") }

// Creating is a managed resource's Ready=False until its first successful create.
func Creating(msg string) Ready { return NotReady(common.ReasonCreating, msg) }

// Deleting is a managed resource's Ready=False while its external resource is deleted.
func Deleting() Ready { return NotReady(common.ReasonDeleting, "") }

// ReadyBecause is Ready=True for reason, for kinds other than managed resources.
func ReadyBecause(reason, msg string) Ready {
	return Ready{Status: metav1.ConditionTrue, Reason: reason, Message: msg}
}

// NotReady is Ready=False for reason.
func NotReady(reason, msg string) Ready {
	return Ready{Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}

// ReadyRule derives an object's Ready condition from how its reconcile ended (o) and its
// conditions before; ok false leaves the condition as it is.
type ReadyRule func(o Outcome, conds []metav1.Condition) (r Ready, ok bool)

// FromOutcome is the rule of kinds whose reconcile observes what they stand for: ready
// when it succeeded, else Ready=False with the outcome's reason (Outcome.Ready).
func FromOutcome(ready Ready) ReadyRule {
	return func(o Outcome, _ []metav1.Condition) (Ready, bool) { return o.Ready(ready), true }
}

// KeepsReady is the rule of kinds that keep what exists through a failed change: ready
// when the reconcile succeeded; after a failure an object keeps the Ready it had (once
// ready it stays so, one found missing stays missing), and one without Ready yet is
// pending.
func KeepsReady(ready, pending Ready) ReadyRule {
	return func(o Outcome, conds []metav1.Condition) (Ready, bool) {
		switch {
		case o.Succeeded():
			return ready, true
		case meta.FindStatusCondition(conds, common.TypeReady) != nil:
			return Ready{}, false
		}
		return pending, true
	}
}

// Record records how a reconcile ended on conds, for generation gen: Synced, and Ready
// by rule (nil: the kind has no Ready of its own). It returns Synced's event, if new. A
// stale outcome (the cache behind a write) records nothing.
func (o Outcome) Record(conds *[]metav1.Condition, gen int64, rule ReadyRule) []Note {
	if o.Stale() {
		return nil
	}
	notes := o.SetSynced(conds, gen)
	if rule != nil {
		if r, ok := rule(o, *conds); ok {
			r.Set(conds, gen)
		}
	}
	return notes
}

// Ready is the one Ready rule of a reconcile that observes what the object stands for:
// ready when the reconcile succeeded, else Ready=False with the outcome's reason and
// message, so that an observation that failed (a cluster that does not answer) shows as
// not ready, which the scheduler relies on.
func (o Outcome) Ready(ready Ready) Ready {
	if o.Succeeded() {
		return ready
	}
	return NotReady(o.Reason, o.Message)
}

// Set records r as the Ready condition of conds for generation gen and reports whether
// it changed.
func (r Ready) Set(conds *[]metav1.Condition, gen int64) bool {
	return SetCondition(conds, gen, common.TypeReady, r.Status, r.Reason, r.Message)
}
