package terraform

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// existingModule is a Module applied two hours ago that recorded two resources, Ready and Synced.
func existingModule(m *terraformv1.Module) {
	then := metav1.NewTime(time.Now().Add(-2 * time.Hour))
	m.Status.Terraform = common.TerraformStatus{InputsHash: "h1", LastPlanTime: &then, LastApplyTime: &then, Resources: 2}
	m.Status.ObservedGeneration = 1
	m.Status.Conditions = []metav1.Condition{
		{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: common.ReasonAvailable, LastTransitionTime: then, ObservedGeneration: 1},
		{Type: common.TypeSynced, Status: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess, LastTransitionTime: then, ObservedGeneration: 1}}
}

// TestDeletedOutsideIsRecreated: a drift check whose refresh finds both objects deleted
// outside Terraform (its refreshed state is empty, the stored one is not) recreates them:
// no StateMissing; Ready=False (Missing) and Drifted name them while the apply runs;
// DriftDetected and DriftCorrected announce it; Ready again once they are back.
func TestDeletedOutsideIsRecreated(t *testing.T) {
	h := newHarness(t, existingModule)
	h.runner.emptyState = true
	h.runner.plans = append(h.runner.plans, gone)
	var during []string
	h.runner.onApply = func() {
		m := h.get()
		for _, typ := range []string{common.TypeReady, common.TypeDrifted} {
			c := meta.FindStatusCondition(m.Status.Conditions, typ)
			during = append(during, string(c.Status)+"/"+c.Reason+": "+c.Message)
		}
	}
	mg := h.reconcile()
	if got := h.calls(); got != "plan apply" {
		t.Fatalf("ran %q, want a plan and its apply", got)
	}
	if len(during) != 2 || !strings.HasPrefix(during[0], "False/Missing: deleted outside Terraform") ||
		!strings.HasPrefix(during[1], "True/DriftDetected: deleted outside Terraform: terraform_data.a, terraform_data.b") {
		t.Errorf("while the apply ran, Ready and Drifted = %q", during)
	}
	ready, drifted := meta.FindStatusCondition(mg.Status.Conditions, common.TypeReady), meta.FindStatusCondition(mg.Status.Conditions, common.TypeDrifted)
	if ready.Reason != common.ReasonAvailable || drifted.Status != metav1.ConditionFalse || synced(mg).Status != metav1.ConditionTrue {
		t.Errorf("afterwards Ready = %+v, Drifted = %+v, Synced = %+v", ready, drifted, synced(mg))
	}
	evs := h.drain()
	if !hasEvent(evs, "Normal DriftDetected the periodic plan found drift: deleted outside Terraform: terraform_data.a, terraform_data.b") ||
		!hasEvent(evs, "Normal DriftCorrected") || hasEvent(evs, "Warning StateMissing") {
		t.Errorf("events = %v", evs)
	}
}

// TestDeletedOutsideAwaitingApproval: with manual approval the deleted objects stay gone
// until the plan is approved, and the resource says so: Ready=False (Missing), Drifted=True,
// both naming them.
func TestDeletedOutsideAwaitingApproval(t *testing.T) {
	h := newHarness(t, func(m *terraformv1.Module) { existingModule(m); m.Spec.Approval = common.ApprovalManual })
	h.runner.emptyState = true
	h.runner.plans = append(h.runner.plans, gone)
	mg := h.reconcile()
	if got := h.calls(); got != "plan" {
		t.Fatalf("ran %q, want a plan only", got)
	}
	ready, drifted := meta.FindStatusCondition(mg.Status.Conditions, common.TypeReady), meta.FindStatusCondition(mg.Status.Conditions, common.TypeDrifted)
	if ready.Status != metav1.ConditionFalse || ready.Reason != common.ReasonMissing || !strings.Contains(ready.Message, "terraform_data.a, terraform_data.b") {
		t.Errorf("Ready = %+v, want False/Missing naming both", ready)
	}
	if drifted.Status != metav1.ConditionTrue || !strings.Contains(drifted.Message, "deleted outside Terraform: terraform_data.a, terraform_data.b") {
		t.Errorf("Drifted = %+v", drifted)
	}
	if s := synced(mg); s.Reason != common.ReasonAwaitingApproval {
		t.Errorf("Synced = %+v, want AwaitingApproval", s)
	}
}
