package resource

import (
	"errors"
	"fmt"
	"testing"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestClassify: every kind of error maps to its Synced status, reason, event and retry;
// a wrapped error is recognised like a bare one.
func TestClassify(t *testing.T) {
	retries := Retries{Success: time.Hour, UserError: 2 * time.Minute, Waiting: 5 * time.Second, Held: 10 * time.Minute, Unavailable: time.Minute}
	boom := errors.New("boom")
	cases := map[string]struct {
		err  error
		want Outcome
	}{
		"success": {nil, Outcome{Synced: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess, Requeue: time.Hour}},
		"waiting": {Waitf("WaitingForX", "x is %s", "coming"),
			Outcome{Synced: metav1.ConditionTrue, Reason: "WaitingForX", Message: "x is coming", Requeue: 5 * time.Second}},
		"held": {Holdf("AwaitingApproval", "approve plan %d", 7),
			Outcome{Synced: metav1.ConditionFalse, Reason: "AwaitingApproval", Message: "approve plan 7", EventType: corev1.EventTypeNormal, Requeue: 10 * time.Minute}},
		"refused": {Refusef("DestructiveChange", "would destroy"),
			Outcome{Synced: metav1.ConditionFalse, Reason: "DestructiveChange", Message: "would destroy", EventType: corev1.EventTypeWarning, Requeue: 10 * time.Minute}},
		"held with its own event reason": {&Held{Reason: "AwaitingApproval", Message: "m", Event: "PlanReady"},
			Outcome{Synced: metav1.ConditionFalse, Reason: "AwaitingApproval", Message: "m", EventType: corev1.EventTypeNormal, EventReason: "PlanReady", Requeue: 10 * time.Minute}},
		"user error": {UserErrorf("BadInput", "fix %s", "it"),
			Outcome{Synced: metav1.ConditionFalse, Reason: "BadInput", Message: "fix it", EventType: corev1.EventTypeWarning, Requeue: 2 * time.Minute}},
		"wrapped user error": {fmt.Errorf("phase: %w", UserErrorf("BadInput", "fix it")),
			Outcome{Synced: metav1.ConditionFalse, Reason: "BadInput", Message: "fix it", EventType: corev1.EventTypeWarning, Requeue: 2 * time.Minute}},
		"unavailable": {fmt.Errorf("connect: %w", unreachable{}),
			Outcome{Synced: metav1.ConditionFalse, Reason: "ClusterUnreachable", Message: "no answer", EventType: corev1.EventTypeWarning, Requeue: time.Minute}},
		"conflict is stale": {apierrors.NewConflict(schema.GroupResource{Resource: "secrets"}, "s", boom), Outcome{Requeue: time.Second}},
		"already exists is stale": {fmt.Errorf("create: %w", apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, "s")),
			Outcome{Requeue: time.Second}},
		"other error": {boom, Outcome{Synced: metav1.ConditionFalse, Reason: common.ReasonReconcileError, Message: "boom", EventType: corev1.EventTypeWarning, Err: boom}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Classify(tc.err, retries)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOutcomePredicates: only success succeeded, only the quiet retry is stale, and the
// result carries the requeue and the error.
func TestOutcomePredicates(t *testing.T) {
	boom := errors.New("boom")
	cases := map[string]struct {
		err              error
		succeeded, stale bool
		requeue          time.Duration
		resultErr        error
	}{
		"success":    {nil, true, false, time.Hour, nil},
		"waiting":    {Waitf("W", "w"), false, false, 0, nil},
		"user error": {UserErrorf("U", "u"), false, false, 0, nil},
		"conflict":   {apierrors.NewConflict(schema.GroupResource{Resource: "x"}, "x", boom), false, true, time.Second, nil},
		"failure":    {boom, false, false, 0, boom},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := Classify(tc.err, Retries{Success: time.Hour})
			if o.Succeeded() != tc.succeeded || o.Stale() != tc.stale {
				t.Errorf("Succeeded() = %v, Stale() = %v; want %v, %v", o.Succeeded(), o.Stale(), tc.succeeded, tc.stale)
			}
			res, err := o.Result()
			if res.RequeueAfter != tc.requeue || !errors.Is(err, tc.resultErr) || (tc.resultErr == nil && err != nil) {
				t.Errorf("Result() = %+v, %v; want requeue %v, error %v", res, err, tc.requeue, tc.resultErr)
			}
		})
	}
}

// TestSetSynced: the event goes out only when the condition's reason or message changed,
// under the event reason when there is one; a stale outcome leaves the condition alone.
func TestSetSynced(t *testing.T) {
	synced := func(status metav1.ConditionStatus, reason, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: "Synced", Status: status, Reason: reason, Message: msg, ObservedGeneration: 1}}
	}
	cases := map[string]struct {
		before    []metav1.Condition
		o         Outcome
		wantNotes []Note
		wantConds []metav1.Condition
	}{
		"first failure is told": {nil, Outcome{Synced: metav1.ConditionFalse, Reason: "Bad", Message: "m", EventType: corev1.EventTypeWarning},
			[]Note{{Type: corev1.EventTypeWarning, Reason: "Bad", Message: "m"}}, synced(metav1.ConditionFalse, "Bad", "m")},
		"the same failure again is not": {synced(metav1.ConditionFalse, "Bad", "m"), Outcome{Synced: metav1.ConditionFalse, Reason: "Bad", Message: "m", EventType: corev1.EventTypeWarning},
			nil, synced(metav1.ConditionFalse, "Bad", "m")},
		"a new message is": {synced(metav1.ConditionFalse, "Bad", "m"), Outcome{Synced: metav1.ConditionFalse, Reason: "Bad", Message: "n", EventType: corev1.EventTypeWarning},
			[]Note{{Type: corev1.EventTypeWarning, Reason: "Bad", Message: "n"}}, synced(metav1.ConditionFalse, "Bad", "n")},
		"event reason overrides": {nil, Outcome{Synced: metav1.ConditionFalse, Reason: "Held", Message: "m", EventType: corev1.EventTypeNormal, EventReason: "PlanReady"},
			[]Note{{Type: corev1.EventTypeNormal, Reason: "PlanReady", Message: "m"}}, synced(metav1.ConditionFalse, "Held", "m")},
		"success sends no event": {synced(metav1.ConditionFalse, "Bad", "m"), Outcome{Synced: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess},
			nil, synced(metav1.ConditionTrue, common.ReasonReconcileSuccess, "")},
		"stale leaves it": {synced(metav1.ConditionFalse, "Bad", "m"), Outcome{Requeue: time.Second},
			nil, synced(metav1.ConditionFalse, "Bad", "m")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			conds := append([]metav1.Condition{}, tc.before...)
			notes := tc.o.SetSynced(&conds, 1)
			if diff := cmp.Diff(tc.wantNotes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantConds, conds, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorsAs: the typed errors are found through wrapping and not confused with each other.
func TestErrorsAs(t *testing.T) {
	user := fmt.Errorf("outer: %w", UserErrorf("R", "user %d", 1))
	wait := fmt.Errorf("outer: %w", Waitf("W", "wait %d", 2))
	if u, ok := AsUserError(user); !ok || u.Reason != "R" || u.Error() != "user 1" {
		t.Errorf("AsUserError(user) = %+v, %v", u, ok)
	}
	if _, ok := AsUserError(wait); ok {
		t.Error("a Waiting is not a UserError")
	}
	if w, ok := AsWaiting(wait); !ok || w.Reason != "W" || w.Error() != "wait 2" {
		t.Errorf("AsWaiting(wait) = %+v, %v", w, ok)
	}
	if _, ok := AsWaiting(user); ok {
		t.Error("a UserError is not a Waiting")
	}
	if _, ok := AsUserError(nil); ok {
		t.Error("nil is no UserError")
	}
}
