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
		waitFor("generation 1: terraform is creating terraform_data.a for 3m0s")
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
