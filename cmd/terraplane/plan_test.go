package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

// heldModule is a Module at generation 2 whose status holds plan id with Synced as given.
func heldModule(id string, synced metav1.Condition) *terraformv1.Module {
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "platform", UID: "u-1", Generation: 2}}
	m.Status.Terraform.Plan = &common.PlanSummary{ID: id, Reason: common.PlanUpdate}
	m.Status.Terraform.LastApply = &common.ApplySummary{ID: "0000000000000000"}
	m.Status.Conditions = []metav1.Condition{synced}
	return m
}

func TestNotApplied(t *testing.T) {
	const approved, newer = "aaaa000000000001", "aaaa000000000002"
	cond := func(reason string, gen int64, msg string) metav1.Condition {
		return metav1.Condition{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: reason, ObservedGeneration: gen, Message: msg}
	}
	stale := "spec.approvedPlan " + approved + " is not the pending plan, so nothing was applied. plan " + newer + " ..."
	for _, tc := range []struct {
		name string
		mg   *terraformv1.Module
		want bool // true: give up waiting
	}{
		{"the approval is not seen yet", heldModule(approved, cond(common.ReasonAwaitingApproval, 1, "plan "+approved+" awaits approval")), false},
		{"a stale plan planned again differently waits", heldModule(newer, cond(common.ReasonAwaitingApproval, 2, stale)), true},
		{"and so does a refused one", heldModule(newer, cond(common.ReasonDestructiveChangeRefused, 2, stale)), true},
		{"the apply failed", heldModule(approved, cond(common.ReasonReconcileError, 2, "Error: boom")), true},
		{"still syncing", heldModule(approved, metav1.Condition{Type: common.TypeSynced, Status: metav1.ConditionTrue, ObservedGeneration: 2}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := notApplied(tc.mg, approved)
			if diff := cmp.Diff(tc.want, err != nil); diff != "" {
				t.Errorf("gives up (-want +got):\n%s\nerr: %v", diff, err)
			}
		})
	}
}

// TestPrintPlanOfObservedDrift: plan show prints the drift plan that an observe-only
// resource holds, with the text the controller kept for it.
func TestPrintPlanOfObservedDrift(t *testing.T) {
	mg := heldModule("aaaa000000000003", metav1.Condition{Type: common.TypeSynced, Status: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess, ObservedGeneration: 2})
	mg.Status.Terraform.Plan.Reason = common.PlanDrift
	mg.Status.Conditions = append(mg.Status.Conditions, metav1.Condition{Type: common.TypeDrifted, Status: metav1.ConditionTrue, Reason: "DriftDetected"})
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: resource.PlanSecretName(mg), Namespace: "platform"},
		Data: map[string][]byte{resource.PlanTextKey: []byte("the drift plan\n")}}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(sec).Build()
	var out bytes.Buffer
	if err := printPlan(context.Background(), &out, c, mg); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, "Plan aaaa000000000003 (Drift, ") || !strings.Contains(got, "pending: drift not corrected (managementPolicies)") ||
		!strings.HasSuffix(got, "\nthe drift plan\n") {
		t.Errorf("plan show printed:\n%s", got)
	}
}

// TestPrintPlanSaysWhatTerraformDoes: while terraform runs long for the resource, plan
// show says first what it is doing, as the resource's Reconciling condition does.
func TestPrintPlanSaysWhatTerraformDoes(t *testing.T) {
	const now = "generation 2: terraform is creating aws_sqs_queue.q for 6m0s; generation 3 is queued behind this run"
	mg := heldModule("aaaa000000000004", metav1.Condition{Type: common.TypeReconciling, Status: metav1.ConditionTrue,
		Reason: common.ReasonTerraformRunning, Message: now, ObservedGeneration: 2})
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: resource.PlanSecretName(mg), Namespace: "platform"},
		Data: map[string][]byte{resource.PlanTextKey: []byte("the plan\n")}}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(sec).Build()
	var out bytes.Buffer
	if err := printPlan(context.Background(), &out, c, mg); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "Now: "+now+"\nPlan aaaa000000000004 (") {
		t.Errorf("plan show printed:\n%s", got)
	}
}

// TestPrintPlanPolicies: plan show prints what the plan policies said, one rule a line.
func TestPrintPlanPolicies(t *testing.T) {
	mg := heldModule("aaaa000000000004", metav1.Condition{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: common.ReasonPolicyDenied, ObservedGeneration: 2})
	mg.Status.Terraform.Plan.Policies = []common.PolicyResult{
		{Policy: "buckets", Rule: "not-public", Result: "Deny", Message: "buckets must not be public (at aws_s3_bucket_public_access_block.this)"},
		{Policy: "tags", Rule: "cost-center", Result: "Pass"},
	}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).Build()
	var out bytes.Buffer
	if err := printPlan(context.Background(), &out, c, mg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  policies:\n", "    Deny             buckets/not-public: buckets must not be public (at aws_s3_bucket_public_access_block.this)\n",
		"    Pass             tags/cost-center\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan show printed:\n%s\nwant a line %q", out.String(), want)
		}
	}
}
