package planpolicy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"

	"terraplane.io/terraplane/internal/plandoc"
)

// BenchmarkEvaluate evaluates 10 rules on a 50-resource plan: redacting the plan JSON,
// then every rule, as the engine's decide step does once per plan.
func BenchmarkEvaluate(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "fifty.json"))
	if err != nil {
		b.Fatal(err)
	}
	exprs := []string{
		`plan.resource_changes.all(rc, 'cost-center' in rc.change.after.tags)`,
		`plan.resource_changes.all(rc, rc.change.after.region.startsWith('us-'))`,
		`plan.resource_changes.filter(rc, 'delete' in rc.change.actions).size() <= 5`,
		`!plan.resource_changes.exists(rc, rc.type == 'aws_db_instance' && 'delete' in rc.change.actions)`,
		`plan.resource_changes.all(rc, !rc.change.after.force_destroy)`,
		`plan.resource_changes.all(rc, rc.change.after.versioning.all(v, v.enabled))`,
		`plan.resource_changes.all(rc, rc.change.after.tags.team != '')`,
		`plan.resource_changes.all(rc, rc.provider_name.endsWith('hashicorp/aws'))`,
		`plan.resource_changes.all(rc, rc.change.after_unknown.arn == true)`,
		`plan.resource_changes.size() <= 100`,
	}
	spec := policyv1.PlanPolicySpec{}
	for i, e := range exprs {
		spec.Rules = append(spec.Rules, policyv1.PolicyRule{Name: fmt.Sprintf("r%d", i), Expression: e})
	}
	p, err := Compile("bench", "", "u", 1, spec)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		doc, err := plandoc.ParsePlan(raw)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range p.Evaluate(context.Background(), Input{Plan: doc}) {
			if !r.Passed {
				b.Fatalf("rule %s failed: %s", r.Rule, r.Message)
			}
		}
	}
}
