package e2e

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// namedPetModule names a random_pet after its input, and has nothing of terraform's own
// provider (whose plans no provider pool serves, so no apply can check them).
var namedPetModule = map[string]string{"main.tf": `
terraform {
  required_providers {
    random = { source = "hashicorp/random" }
  }
}
variable "name" { type = string }
resource "random_pet" "p" {
  prefix = var.name
  length = 2
}
output "pet" { value = random_pet.p.id }
`}

// TestPolicyCheckedInARunner: with terraform in runner processes, a create that a
// NamespacedPlanPolicy matches is checked inside its one apply in the pool's runner: one
// that passes is created without a plan first, with the rule's Pass in its status; one
// that the policy denies makes nothing in that apply, and is planned and denied.
func TestPolicyCheckedInARunner(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const ns = "e2e-policy-runner"
	pool := `pool="` + ns + `/default"`
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &policyv1.NamespacedPlanPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pets"},
		Spec: policyv1.PlanPolicySpec{Match: policyv1.PolicyMatch{ResourceTypes: []string{"random_pet"}}, Rules: []policyv1.PolicyRule{{
			Name: "no-bad-pets", Message: "no pet is named bad",
			Expression: `plan.resource_changes.all(rc, rc.change.after.prefix != 'bad')`}}}})).To(Succeed())
	_, controller := startRunnerManager(t, g, app.Options{})
	pet := func(name string) *terraformv1.Module {
		m := moduleFrom(g, ctx, ns, name, namedPetModule, fmt.Sprintf(`{"name": %q}`, name))
		m.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
		return m
	}

	By(t, "a create that passes is checked inside its one apply in the runner")
	good := pet("good")
	waitModuleReady(g, ctx, good)
	g.Expect(good.Status.Terraform.Plan.Policies).To(ConsistOf(common.PolicyResult{Policy: ns + "/pets", Rule: "no-bad-pets", Result: "Pass"}))
	got := scrape(g, controller)
	g.Expect(sumOf(got, "terraplane_runner_runs_total", pool, `verb="create"`, `result="success"`)).To(Equal(1.0))
	g.Expect(sumOf(got, "terraplane_runner_runs_total", pool, `verb="plan"`)).To(BeZero(), "no plan first")

	By(t, "a create the policy denies makes nothing in its apply, and is planned and denied")
	bad := pet("bad")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bad), bad)).To(Succeed())
		synced := framework.Condition(bad.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal(common.ReasonPolicyDenied), "%+v", synced)
		g.Expect(synced.Message).To(ContainSubstring("no pet is named bad (at module.this.random_pet.p)"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(bad.Status.Terraform.LastApply).To(BeNil())
	g.Expect(bad.Status.Terraform.Resources).To(BeZero(), "nothing was made")
	got = scrape(g, controller)
	g.Expect(sumOf(got, "terraplane_runner_runs_total", pool, `verb="plan"`)).To(BeNumerically(">=", 1))
	t.Logf("FIGURE runs sent to %s: creates %v (refused or failed: %v), plans %v", pool, sumOf(got, "terraplane_runner_runs_total", pool, `verb="create"`),
		sumOf(got, "terraplane_runner_runs_total", pool, `verb="create"`, `result="error"`), sumOf(got, "terraplane_runner_runs_total", pool, `verb="plan"`))

	By(t, "deleting them destroys what there is")
	g.Expect(env.Client.Delete(ctx, good)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, bad)).To(Succeed())
	waitGone(g, ctx, good, bad)
}
