package main

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// TestUndoTarget: undo goes back to the newest revision older than the one rolling out,
// or to the one named (by name or number); a name the class does not keep, or nothing
// older, is refused.
func TestUndoTarget(t *testing.T) {
	revs := []common.RevisionCount{{Name: "c-e", Revision: 5}, {Name: "c-c", Revision: 3}, {Name: "c-b", Revision: 2}}
	rc := func(latest string, rolling string) *common.ClassRevisions {
		out := &common.ClassRevisions{LatestRevision: latest, Revisions: revs}
		if rolling != "" {
			out.Rollout = &common.RolloutStatus{Revision: rolling}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		rc      *common.ClassRevisions
		to      string
		want    string
		wantErr bool
	}{
		{"the one before the latest", rc("c-e", ""), "", "c-c", false},
		{"the one before the revision rolling out", rc("c-e", "c-c"), "", "c-b", false},
		{"by number", rc("c-e", ""), "2", "c-b", false},
		{"by name", rc("c-e", ""), "c-e", "c-e", false},
		{"one the class does not keep", rc("c-e", ""), "4", "", true},
		{"nothing older", rc("c-e", "c-b"), "", "", true},
	} {
		got, err := undoTarget(tc.rc, tc.to)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: %q, %v; want %q (error %v)", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestRolloutProgress: --watch right after a class edit waits for the revision the class
// names now, not the old rollout, which is complete; then reports that one's waves, pause
// and completion.
func TestRolloutProgress(t *testing.T) {
	done := metav1.Now()
	class := func(gen, observed int64, latest string, ro *common.RolloutStatus) *terraformv1.ModuleClass {
		c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Name: "queues", Namespace: "terraplane-system", Generation: gen}}
		c.Status.ClassRevisions = common.ClassRevisions{LatestRevision: latest, Rollout: ro}
		*c.GetClassConditions() = []metav1.Condition{{Type: common.TypeRolloutPaused, Status: metav1.ConditionFalse, ObservedGeneration: observed}}
		return c
	}
	old := &common.RolloutStatus{Revision: "queues-1", Total: 4, Updated: 4, CompletedAt: &done}
	for _, tc := range []struct {
		name     string
		class    *terraformv1.ModuleClass
		finished bool
		says     string
		err      bool
	}{
		{"an edit not observed yet: the old complete rollout is not the one watched", class(2, 1, "queues-1", old), false, "waiting for the revision of generation 2", false},
		{"observed, the new revision's rollout not started", class(2, 2, "queues-2", old), false, "waiting for the rollout of queues-2 to start", false},
		{"its waves", class(2, 2, "queues-2", &common.RolloutStatus{Revision: "queues-2", Wave: 1, Updated: 1, Total: 4}), false, "wave 1: 1 of 4 resources run queues-2", false},
		{"its pause", class(2, 2, "queues-2", &common.RolloutStatus{Revision: "queues-2", Paused: "Failed", Message: "boom"}), true, "", true},
		{"its completion", class(2, 2, "queues-2", &common.RolloutStatus{Revision: "queues-2", Total: 4, Updated: 4, CompletedAt: &done}), true, "revision queues-2 runs on all 4", false},
		{"no edit: a complete rollout is complete", class(1, 1, "queues-1", old), true, "revision queues-1 runs on all 4", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			finished, line, err := rolloutProgress(tc.class)
			if finished != tc.finished || (err != nil) != tc.err || !strings.Contains(line, tc.says) {
				t.Errorf("rolloutProgress = %v, %q, %v; want %v, %q, error %v", finished, line, err, tc.finished, tc.says, tc.err)
			}
		})
	}
}

// TestPrintRolloutProviders: rollout status lists the provider versions the class's
// resources run, and no table when none has run.
func TestPrintRolloutProviders(t *testing.T) {
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "pets"}}
	class.Status.LatestRevision = "pets-2"
	var b strings.Builder
	printRollout(&b, class)
	if strings.Contains(b.String(), "PROVIDER") {
		t.Errorf("a class whose resources never ran lists providers:\n%s", b.String())
	}
	class.Status.Providers = []common.ProviderVersionCount{{Provider: "hashicorp/random", Version: "3.10.0", Resources: 1}, {Provider: "hashicorp/random", Version: "3.9.0", Resources: 3}}
	b.Reset()
	printRollout(&b, class)
	for _, want := range []string{"PROVIDER          VERSION  RESOURCES", "hashicorp/random  3.10.0   1", "hashicorp/random  3.9.0    3"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("rollout status does not say %q:\n%s", want, b.String())
		}
	}
}
