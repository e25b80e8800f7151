package resource

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// TestOutcomeReady: success gives the kind's ready condition; any other outcome,
// waiting included, is Ready=False with the outcome's reason and message.
func TestOutcomeReady(t *testing.T) {
	cases := map[string]struct {
		err  error
		want Ready
	}{
		"success":     {nil, Ready{Status: metav1.ConditionTrue, Reason: common.ReasonAvailable}},
		"waiting":     {Waitf("WaitingForConnectionDetails", "no host yet"), Ready{Status: metav1.ConditionFalse, Reason: "WaitingForConnectionDetails", Message: "no host yet"}},
		"user error":  {UserErrorf("InvalidManifest", "bad"), Ready{Status: metav1.ConditionFalse, Reason: "InvalidManifest", Message: "bad"}},
		"unavailable": {unreachable{}, Ready{Status: metav1.ConditionFalse, Reason: "ClusterUnreachable", Message: "no answer"}},
		"other error": {errors.New("boom"), Ready{Status: metav1.ConditionFalse, Reason: common.ReasonReconcileError, Message: "boom"}},
	}
	for name, c := range cases {
		got := Classify(c.err, Retries{}).Ready(Available())
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

type unreachable struct{}

func (unreachable) Error() string             { return "no answer" }
func (unreachable) UnavailableReason() string { return "ClusterUnreachable" }

// TestReadySet: Set writes the Ready condition for the generation and reports a change
// only when there is one.
func TestReadySet(t *testing.T) {
	var conds []metav1.Condition
	if !Creating("waiting for a successful apply").Set(&conds, 1) {
		t.Fatal("first Set: want a change")
	}
	if Creating("waiting for a successful apply").Set(&conds, 1) {
		t.Error("same condition again: want no change")
	}
	if !Available().Set(&conds, 2) {
		t.Error("Available: want a change")
	}
	got := conds[0]
	if got.Type != common.TypeReady || got.Status != metav1.ConditionTrue || got.Reason != common.ReasonAvailable || got.ObservedGeneration != 2 {
		t.Errorf("got %+v, want Ready=True Available at generation 2", got)
	}
	if d := Deleting(); d.Status != metav1.ConditionFalse || d.Reason != common.ReasonDeleting {
		t.Errorf("Deleting() = %+v", d)
	}
}

// TestReadyRules: FromOutcome follows the outcome; KeepsReady keeps what was once ready
// through a failure; Record records nothing for a stale outcome.
func TestReadyRules(t *testing.T) {
	ready, pending := ReadyBecause("Up", ""), NotReady("Creating", "")
	failed := Outcome{Synced: metav1.ConditionFalse, Reason: "Boom", Message: "it broke"}
	succeeded := Outcome{Synced: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess}
	wasReady := []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: "Up"}}
	for _, tc := range []struct {
		name  string
		rule  ReadyRule
		o     Outcome
		conds []metav1.Condition
		want  string // Status/Reason of Ready afterwards; empty: no Ready
	}{
		{"from outcome, success", FromOutcome(ready), succeeded, nil, "True/Up"},
		{"from outcome, failure", FromOutcome(ready), failed, wasReady, "False/Boom"},
		{"keeps ready, success", KeepsReady(ready, pending), succeeded, nil, "True/Up"},
		{"keeps ready through a failure", KeepsReady(ready, pending), failed, wasReady, "True/Up"},
		{"never ready, failure: pending", KeepsReady(ready, pending), failed, nil, "False/Creating"},
		{"found missing, failure: still missing", KeepsReady(ready, pending), failed,
			[]metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionFalse, Reason: common.ReasonMissing}}, "False/Missing"},
		{"stale records nothing", FromOutcome(ready), Outcome{Requeue: time.Second}, nil, ""},
		{"no rule leaves Ready alone", nil, failed, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds := append([]metav1.Condition(nil), tc.conds...)
			tc.o.Record(&conds, 1, tc.rule)
			got := ""
			if c := meta.FindStatusCondition(conds, common.TypeReady); c != nil {
				got = string(c.Status) + "/" + c.Reason
			}
			if got != tc.want {
				t.Errorf("Ready = %q, want %q", got, tc.want)
			}
		})
	}
}
