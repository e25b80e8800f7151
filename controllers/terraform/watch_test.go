package terraform

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
)

// TestActivityMessage: the Reconciling message names the generation, what terraform
// does and for how long, and a newer generation queued behind the run.
func TestActivityMessage(t *testing.T) {
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	creating := engine.Activity{Verb: "apply", Since: start, Operations: []engine.Operation{{Address: "aws_sqs_queue.q", Action: "create", Since: start}}}
	for name, tc := range map[string]struct {
		act    engine.Activity
		queued int64
		want   string
	}{
		"no command streams":  {engine.Activity{}, 5, ""},
		"a create in flight":  {creating, 0, "generation 4: terraform is creating aws_sqs_queue.q for 6m0s"},
		"an edit queued":      {creating, 5, "generation 4: terraform is creating aws_sqs_queue.q for 6m0s; generation 5 is queued behind this run"},
		"a plan, no resource": {engine.Activity{Verb: "plan", Since: start}, 0, "generation 4: terraform plan running for 6m0s"},
	} {
		if got := activityMessage(4, tc.act, tc.queued, start.Add(6*time.Minute)); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

// TestReportCadence: a change in what terraform does is written at once; the same
// operation's time again after activityEvery, then twice as long apart each time, up to
// activityAtMost.
func TestReportCadence(t *testing.T) {
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	var c reportCadence
	for i, step := range []struct {
		key  string
		at   time.Time
		want bool
	}{
		{"create a", at(5 * time.Second), true},
		{"create a", at(10 * time.Second), false},
		{"create a", at(15 * time.Second), true}, // 10 s after the first
		{"create a", at(25 * time.Second), false},
		{"create a", at(35 * time.Second), true}, // 20 s after
		{"create a", at(65 * time.Second), false},
		{"create a", at(75 * time.Second), true}, // 40 s after
		{"create b", at(76 * time.Second), true}, // another operation: at once
		{"create b", at(85 * time.Second), false},
		{"create b", at(86 * time.Second), true}, // 10 s again
	} {
		got := c.due(step.key, step.at)
		if got != step.want {
			t.Fatalf("step %d (%s at %s): due %v, want %v", i, step.key, step.at.Sub(start), got, step.want)
		}
		if got {
			c.wrote(step.key, step.at)
		}
	}
	// An hour of the same operation: about fifteen writes, at most activityAtMost apart.
	writes, now := 0, at(86*time.Second)
	for end := now.Add(time.Hour); now.Before(end); now = now.Add(activityEvery) {
		if c.due("create b", now) {
			c.wrote("create b", now)
			writes++
		}
	}
	if c.wait != activityAtMost || writes > 20 {
		t.Errorf("an hour of one operation: %d writes, the last %s apart; want at most 20, %s apart", writes, c.wait, activityAtMost)
	}
}

// TestLongCreateReportsItsActivity: while a create runs, the resource's Reconciling
// condition says what terraform is creating, then that an edit made meanwhile is queued;
// the run still records the generation it applied, not the edit's.
func TestLongCreateReportsItsActivity(t *testing.T) {
	defer func(first, every time.Duration) { activityFirst, activityEvery = first, every }(activityFirst, activityEvery)
	activityFirst, activityEvery = 20*time.Millisecond, 20*time.Millisecond
	h := newHarness(t, nil)
	since := time.Now().Add(-3 * time.Minute)
	h.runner.activity = engine.Activity{Verb: "apply", Since: since, Operations: []engine.Operation{{Address: "terraform_data.a", Action: "create", Since: since}}}
	reconciling := func() string {
		c := meta.FindStatusCondition(h.get().Status.Conditions, common.TypeReconciling)
		if c == nil || c.Reason != common.ReasonTerraformRunning {
			return ""
		}
		return c.Message
	}
	waitFor := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !strings.Contains(reconciling(), want); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("Reconciling %q, want it to say %q", reconciling(), want)
			}
		}
	}
	h.runner.onCreate = func() {
		waitFor("generation 1: terraform is creating terraform_data.a for 3m") // 3m0s, or more on a busy machine
		h.edit(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = "p-2" })
		waitFor("generation 2 is queued behind this run")
	}
	mg := h.reconcile()
	if mg.Status.ObservedGeneration != 1 {
		t.Errorf("observedGeneration %d, want 1: the run applied generation 1", mg.Status.ObservedGeneration)
	}
	if c := meta.FindStatusCondition(mg.Status.Conditions, common.TypeReconciling); c != nil && c.Reason == common.ReasonTerraformRunning {
		t.Errorf("after the run, Reconciling still says %q", c.Message)
	}
	if r := meta.FindStatusCondition(mg.Status.Conditions, common.TypeReady); r == nil || r.Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v after the create", r)
	}
}
