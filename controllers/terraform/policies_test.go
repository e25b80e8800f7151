package terraform

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/planpolicy"
	"terraplane.io/terraplane/internal/plugins"
)

// sizePlan is an update of terraform_data.a to size, with its plan document.
func sizePlan(id, size string) *engine.Plan {
	doc := `{"resource_changes":[{"address":"terraform_data.a","type":"terraform_data","mode":"managed","provider_name":"terraform.io/builtin/terraform",
		"change":{"actions":["update"],"before":{"input":"small"},"after":{"input":"` + size + `"},"after_unknown":{},"before_sensitive":{},"after_sensitive":{}}}]}`
	return &engine.Plan{ID: id, Changes: []engine.Change{{Address: "terraform_data.a", Actions: []string{"update"}}}, File: []byte("saved-" + id),
		Text: "text of " + id, Document: []byte(doc)}
}

// withPolicy makes the harness's reconciler check plan policies, and adds one whose
// rule "no-large" says inputs are never "large", with enforcement e.
func withPolicy(t *testing.T, h *harness, e policyv1.Enforcement) *policyv1.PlanPolicy {
	t.Helper()
	h.tf.policies = &planPolicies{client: h.c, cache: &planpolicy.Cache{}}
	p := &policyv1.PlanPolicy{ObjectMeta: metav1.ObjectMeta{Name: "sizes", UID: "p-1", Generation: 1},
		Spec: policyv1.PlanPolicySpec{Match: policyv1.PolicyMatch{Kinds: []policyv1.KindMatch{{Kind: "Module"}}}, Rules: []policyv1.PolicyRule{{
			Name: "no-large", Enforcement: e, Message: "large is not allowed",
			Expression: `plan.resource_changes.all(rc, rc.change.after.input != 'large')`}}}}
	if err := h.c.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// existing is a module applied from inputs h0, planned already.
func existing(m *terraformv1.Module) {
	now := metav1.Now()
	m.Status.Terraform.InputsHash, m.Status.Terraform.Resources = "h0", 1
	m.Status.Terraform.LastApplyTime, m.Status.Terraform.LastPlanTime = &now, &now
}

// TestPolicyDenyCannotBeApproved: a Deny stops the run with PolicyDenied naming the
// policy, rule, address and message; approving the plan applies nothing; a fixed
// configuration applies.
func TestPolicyDenyCannotBeApproved(t *testing.T) {
	h := newHarness(t, existing)
	withPolicy(t, h, policyv1.EnforcementDeny)
	large := sizePlan("aaaa0000000000d1", "large")
	h.runner.plans = []*engine.Plan{large}
	mg := h.reconcile()
	s := synced(mg)
	if got := h.calls(); got != "plan" || s.Reason != common.ReasonPolicyDenied {
		t.Fatalf("ran %q, Synced %+v; want a plan only, denied", got, s)
	}
	for _, want := range []string{"policy sizes rule no-large", "large is not allowed", "(at terraform_data.a)", large.ID} {
		if !strings.Contains(s.Message, want) {
			t.Errorf("Synced message %q does not name %q", s.Message, want)
		}
	}
	want := []common.PolicyResult{{Policy: "sizes", Rule: "no-large", Result: "Deny", Message: "large is not allowed (at terraform_data.a)"}}
	if p := mg.Status.Terraform.Plan; p == nil || p.ID != large.ID || len(p.Policies) != 1 || p.Policies[0] != want[0] {
		t.Errorf("status plan %+v, want the denied plan with its policy result", p)
	}
	if !hasEvent(h.drain(), "Warning PolicyDenied") {
		t.Error("no PolicyDenied event")
	}
	if got := h.savedFile(); got != "" {
		t.Errorf("a denied plan was kept for approval: %q", got)
	}

	h.edit(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = large.ID })
	h.runner.plans = []*engine.Plan{sizePlan(large.ID, "large")}
	if mg = h.reconcile(); h.calls() != "plan" || synced(mg).Reason != common.ReasonPolicyDenied {
		t.Fatalf("an approved denied plan: ran %q, Synced %+v; want it planned and denied again", h.calls(), synced(mg))
	}

	h.render.hash = "h2"
	h.runner.plans = []*engine.Plan{sizePlan("aaaa0000000000d2", "medium")}
	if mg = h.reconcile(); h.calls() != "plan apply" || synced(mg).Status != metav1.ConditionTrue {
		t.Fatalf("a fixed configuration: ran %q, Synced %+v; want it applied", h.calls(), synced(mg))
	}
	if p := mg.Status.Terraform.Plan; len(p.Policies) != 1 || p.Policies[0].Result != "Pass" {
		t.Errorf("status plan policies %+v, want the rule passed", p.Policies)
	}
}

// TestPolicyRequiresApproval: a RequireApproval rule holds an automatic plan until it is
// approved; then the saved plan is applied.
func TestPolicyRequiresApproval(t *testing.T) {
	h := newHarness(t, existing)
	withPolicy(t, h, policyv1.EnforcementRequireApproval)
	large := sizePlan("aaaa0000000000a1", "large")
	h.runner.plans = []*engine.Plan{large}
	mg := h.reconcile()
	if got, s := h.calls(), synced(mg); got != "plan" || s.Reason != common.ReasonPolicyRequiresApproval || !strings.Contains(s.Message, "approve it with spec.approvedPlan: "+large.ID) {
		t.Fatalf("ran %q, Synced %+v; want the plan held for approval", got, s)
	}
	if got := h.savedFile(); got != "saved-"+large.ID {
		t.Fatalf("the held plan was not kept: %q", got)
	}
	h.edit(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = large.ID })
	if mg = h.reconcile(); h.calls() != "apply" || synced(mg).Status != metav1.ConditionTrue {
		t.Fatalf("approved: ran %q, Synced %+v; want the saved plan applied", h.calls(), synced(mg))
	}
}

// TestPolicyChangeReplans: removing the policy that holds a plan plans again at the next
// reconcile, without waiting for the drift interval.
func TestPolicyChangeReplans(t *testing.T) {
	h := newHarness(t, existing)
	p := withPolicy(t, h, policyv1.EnforcementRequireApproval)
	h.runner.plans = []*engine.Plan{sizePlan("aaaa0000000000c1", "large")}
	if mg := h.reconcile(); synced(mg).Reason != common.ReasonPolicyRequiresApproval {
		t.Fatalf("Synced %+v, want the plan held", synced(mg))
	}
	h.calls()
	if h.reconcile(); h.calls() != "" {
		t.Fatal("a held plan was planned again though nothing changed")
	}
	if err := h.c.Delete(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	h.runner.plans = []*engine.Plan{sizePlan("aaaa0000000000c1", "large")}
	if mg := h.reconcile(); h.calls() != "plan apply" || synced(mg).Status != metav1.ConditionTrue {
		t.Fatalf("after the policy went: ran %q, Synced %+v; want the plan made again and applied", h.calls(), synced(mg))
	}
}

// TestPolicyWarn: a Warn rule applies the plan, with an event and a status line.
func TestPolicyWarn(t *testing.T) {
	h := newHarness(t, existing)
	withPolicy(t, h, policyv1.EnforcementWarn)
	h.runner.plans = []*engine.Plan{sizePlan("aaaa0000000000e1", "large")}
	mg := h.reconcile()
	if got := h.calls(); got != "plan apply" {
		t.Fatalf("ran %q, want the plan applied", got)
	}
	if !hasEvent(h.drain(), "Warning PolicyWarning plan aaaa0000000000e1: policy sizes rule no-large: large is not allowed") {
		t.Error("no PolicyWarning event")
	}
	if p := mg.Status.Terraform.Plan; len(p.Policies) != 1 || p.Policies[0].Result != "Warn" {
		t.Errorf("status plan policies %+v, want a Warn line", p.Policies)
	}
}

// terraformData is a create of a terraform_data whose input is input, as the engine's
// check reads it from the provider's plan.
func terraformData(input string) []plugins.PlannedCreate {
	return []plugins.PlannedCreate{{Address: "terraform_data.a", Type: "terraform_data", Provider: "terraform.io/builtin/terraform",
		After: map[string]any{"input": input}, AfterUnknown: map[string]any{"id": true}, AfterSensitive: map[string]any{}}}
}

// TestPolicyChecksCreatesInTheirApply: a create that a policy matches is checked inside
// its one combined run, which goes on when its plan passes (the results in its status);
// one that does not pass makes nothing and is planned first, where the policy denies it.
func TestPolicyChecksCreatesInTheirApply(t *testing.T) {
	h := newHarness(t, nil)
	withPolicy(t, h, policyv1.EnforcementDeny)
	h.runner.planned = terraformData("small")
	mg := h.reconcile()
	if got := h.calls(); got != "checked-create" || synced(mg).Status != metav1.ConditionTrue {
		t.Fatalf("ran %q, Synced %+v; want one checked create", got, synced(mg))
	}
	want := []common.PolicyResult{{Policy: "sizes", Rule: "no-large", Result: planpolicy.ResultPass}}
	if d := cmp.Diff(want, mg.Status.Terraform.Plan.Policies); d != "" {
		t.Errorf("policies (-want +got):\n%s", d)
	}

	h = newHarness(t, nil)
	withPolicy(t, h, policyv1.EnforcementDeny)
	h.runner.planned = terraformData("large")
	h.runner.plans = []*engine.Plan{sizePlan("aaaa0000000000f1", "large")}
	if mg := h.reconcile(); h.calls() != "checked-create plan" || synced(mg).Reason != common.ReasonPolicyDenied {
		t.Fatalf("ran %q, Synced %+v; want a refused create, then a plan, denied", h.calls(), synced(mg))
	}
}

// TestPolicyOfOtherTypesCreatesDirectly: a policy of resource types the workspace
// declares none of could not check its plan, so the create is not checked; one of a type
// it declares is checked inside the create; a workspace whose types are not all known,
// whose values terraform may mark sensitive beyond the providers' schemas, or with a
// resource of terraform's own provider, plans first.
func TestPolicyOfOtherTypesCreatesDirectly(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"no bucket declared":      {map[string]string{"main.tf": `resource "terraform_data" "a" {}`}, "create"},
		"a bucket declared":       {map[string]string{"main.tf": `resource "aws_s3_bucket" "b" {}`}, "checked-create"},
		"a terraform_data too":    {map[string]string{"main.tf": "resource \"terraform_data\" \"a\" {}\nresource \"aws_s3_bucket\" \"b\" {}"}, "plan"},
		"a sensitive variable":    {map[string]string{"main.tf": "variable \"v\" { sensitive = true }\nresource \"aws_s3_bucket\" \"b\" {}"}, "plan"},
		"a module from elsewhere": {map[string]string{"main.tf": `module "s3" { source = "terraform-aws-modules/s3-bucket/aws" }`}, "plan"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			p := withPolicy(t, h, policyv1.EnforcementDeny)
			p.Spec.Match.ResourceTypes = []string{"aws_s3_bucket"}
			if err := h.c.Update(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			h.render.files = map[string][]byte{}
			for n, c := range tc.files {
				h.render.files[n] = []byte(c)
			}
			h.runner.plans = []*engine.Plan{sizePlan("aaaa0000000000f2", "small")}
			h.reconcile()
			if got := h.calls(); !strings.HasPrefix(got+" ", tc.want+" ") {
				t.Errorf("ran %q, want %s first", got, tc.want)
			}
		})
	}
}

// TestPolicyDeniesDriftCorrection: a drift correction a policy denies is not applied,
// and the drift is reported.
func TestPolicyDeniesDriftCorrection(t *testing.T) {
	h := newHarness(t, func(m *terraformv1.Module) {
		existing(m)
		m.Status.Terraform.InputsHash = "h1" // unchanged inputs: a plan now is a drift check
		old := metav1.NewTime(metav1.Now().Add(-2 * time.Hour))
		m.Status.Terraform.LastPlanTime = &old
	})
	withPolicy(t, h, policyv1.EnforcementDeny)
	h.runner.plans = []*engine.Plan{sizePlan("aaaa0000000000b1", "large")}
	mg := h.reconcile()
	if got := h.calls(); got != "plan" || synced(mg).Reason != common.ReasonPolicyDenied {
		t.Fatalf("ran %q, Synced %+v; want a drift plan, denied", got, synced(mg))
	}
	if d := meta.FindStatusCondition(mg.Status.Conditions, common.TypeDrifted); d == nil || d.Status != metav1.ConditionTrue {
		t.Errorf("Drifted = %+v, want the drift reported", d)
	}
}
