package planpolicy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"

	"terraplane.io/terraplane/internal/plandoc"
)

// fixture reads and redacts a plan JSON fixture.
func fixture(t testing.TB, name string) *plandoc.Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := plandoc.ParsePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// policy compiles a one-rule policy.
func policy(t testing.TB, types []string, rule policyv1.PolicyRule) *Policy {
	t.Helper()
	p, err := Compile("guard", "", "uid", 1, policyv1.PlanPolicySpec{Match: policyv1.PolicyMatch{ResourceTypes: types}, Rules: []policyv1.PolicyRule{rule}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvaluate(t *testing.T) {
	cases := []struct {
		name, plan string
		types      []string
		rule       policyv1.PolicyRule
		in         Input
		want       []Result
	}{{
		name: "create: a public bucket is denied, at its address",
		plan: "create.json", types: []string{"aws_s3_bucket_public_access_block"},
		rule: policyv1.PolicyRule{Name: "not-public", Message: "buckets must not be public",
			Expression: `plan.resource_changes.all(rc, rc.change.after.block_public_acls && rc.change.after.block_public_policy)`},
		want: []Result{{Policy: "guard", Rule: "not-public", Enforcement: policyv1.EnforcementDeny, Addresses: []string{"module.this.aws_s3_bucket_public_access_block.this"},
			Message: "buckets must not be public (at module.this.aws_s3_bucket_public_access_block.this)"}},
	}, {
		name: "create: the tag is there",
		plan: "create.json", types: []string{"aws_s3_bucket"},
		rule: policyv1.PolicyRule{Name: "cost-center", Expression: `plan.resource_changes.all(rc, 'cost-center' in rc.change.after.tags)`},
		want: []Result{{Policy: "guard", Rule: "cost-center", Enforcement: policyv1.EnforcementDeny, Passed: true}},
	}, {
		name: "update: a messageExpression names the class asked for",
		plan: "update.json",
		rule: policyv1.PolicyRule{Name: "db-size", Enforcement: policyv1.EnforcementRequireApproval,
			Expression:        `namespaceObject.metadata.labels.?env.orValue('') == 'production' || plan.resource_changes.all(rc, rc.type != 'aws_db_instance' || rc.change.after.instance_class in ['db.t3.micro', 'db.r6g.large', 'db.r6g.xlarge'])`,
			MessageExpression: `'instance class ' + plan.resource_changes[0].change.after.instance_class + ' is for production only'`},
		in: Input{NamespaceLabels: map[string]string{"env": "dev"}},
		want: []Result{{Policy: "guard", Rule: "db-size", Enforcement: policyv1.EnforcementRequireApproval, Addresses: []string{"module.this.aws_db_instance.this"},
			Message: "instance class db.r6g.2xlarge is for production only (at module.this.aws_db_instance.this)"}},
	}, {
		name: "update: the namespace's labels let it through",
		plan: "update.json",
		rule: policyv1.PolicyRule{Name: "db-size", Expression: `namespaceObject.metadata.labels.?env.orValue('') == 'production' || plan.resource_changes.all(rc, rc.change.after.instance_class == 'db.t3.micro')`},
		in:   Input{Namespace: "shop", NamespaceLabels: map[string]string{"env": "production"}},
		want: []Result{{Policy: "guard", Rule: "db-size", Enforcement: policyv1.EnforcementDeny, Passed: true}},
	}, {
		name: "replace: destroying a database waits for approval",
		plan: "replace.json",
		rule: policyv1.PolicyRule{Name: "no-db-replace", Enforcement: policyv1.EnforcementRequireApproval, Message: "replacing a database needs approval",
			Expression: `!plan.resource_changes.exists(rc, rc.type == 'aws_db_instance' && 'delete' in rc.change.actions)`},
		want: []Result{{Policy: "guard", Rule: "no-db-replace", Enforcement: policyv1.EnforcementRequireApproval, Addresses: []string{"module.this.aws_db_instance.this"},
			Message: "replacing a database needs approval (at module.this.aws_db_instance.this)"}},
	}, {
		name: "delete: a count over the whole plan names no single address",
		plan: "delete.json",
		rule: policyv1.PolicyRule{Name: "max-destroy", Enforcement: policyv1.EnforcementWarn,
			Expression:        `plan.resource_changes.filter(rc, 'delete' in rc.change.actions).size() <= 5`,
			MessageExpression: `string(plan.resource_changes.filter(rc, 'delete' in rc.change.actions).size()) + ' resources would be destroyed, over 5'`},
		want: []Result{{Policy: "guard", Rule: "max-destroy", Enforcement: policyv1.EnforcementWarn, Message: "7 resources would be destroyed, over 5"}},
	}, {
		name: "unknown values: after_unknown says what is known after apply",
		plan: "create.json", types: []string{"aws_s3_bucket"},
		rule: policyv1.PolicyRule{Name: "arn-unknown", Expression: `plan.resource_changes.all(rc, rc.change.after_unknown.arn == true && !has(rc.change.after.arn))`},
		want: []Result{{Policy: "guard", Rule: "arn-unknown", Enforcement: policyv1.EnforcementDeny, Passed: true}},
	}, {
		name: "sensitive values are redacted, before and after, and inside other texts",
		plan: "sensitive.json",
		rule: policyv1.PolicyRule{Name: "no-secret", Expression: `plan.resource_changes[0].change.after.input.password == '(sensitive value)' &&
				plan.resource_changes[0].change.before.input.password == '(sensitive value)' &&
				plan.resource_changes[0].change.before.output.password == '(sensitive value)' &&
				plan.resource_changes[0].change.before.output.user == 'app' &&
				plan.resource_changes[1].change.after.input == 'postgres://app:(sensitive value)@db:5432/app'`},
		want: []Result{{Policy: "guard", Rule: "no-secret", Enforcement: policyv1.EnforcementDeny, Passed: true}},
	}, {
		name: "a run-time error denies, with the error",
		plan: "delete.json",
		rule: policyv1.PolicyRule{Name: "bad-index", Enforcement: policyv1.EnforcementWarn, Expression: `plan.resource_changes[100].type == 'x'`},
		want: []Result{{Policy: "guard", Rule: "bad-index", Enforcement: policyv1.EnforcementDeny,
			Message: "the rule could not be evaluated: index out of bounds: 100"}},
	}, {
		name: "a field absent from the plan is named, with how to test for it",
		plan: "create.json", types: []string{"aws_s3_bucket"},
		rule: policyv1.PolicyRule{Name: "acl", Expression: `plan.resource_changes.all(rc, rc.change.after.acl != 'public-read')`},
		want: []Result{{Policy: "guard", Rule: "acl", Enforcement: policyv1.EnforcementDeny,
			Message: "the rule could not be evaluated: no such key: acl: a field the rule reads is absent from this plan; test it first, e.g. has(rc.change.after.acl)"}},
	}, {
		name: "a plan without the policy's resource types is not checked",
		plan: "delete.json", types: []string{"aws_s3_bucket"},
		rule: policyv1.PolicyRule{Name: "never", Expression: `false`},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Plan = fixture(t, tc.plan)
			got := policy(t, tc.types, tc.rule).Evaluate(context.Background(), in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSensitiveNeverVisible checks that no secret text of the fixture reaches the
// document rules see, in any form a rule could print.
func TestSensitiveNeverVisible(t *testing.T) {
	d := fixture(t, "sensitive.json")
	b, err := json.Marshal(d.Changes)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"old-s3cret-pw", "new-s3cret-pw"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the document shows %q:\n%s", secret, b)
		}
	}
	if !strings.Contains(string(b), plandoc.SensitiveValue) || !strings.Contains(string(b), `"user":"app"`) {
		t.Errorf("the document should mask only the sensitive values:\n%s", b)
	}
	p := policy(t, nil, policyv1.PolicyRule{Name: "leak", Expression: `false`, MessageExpression: `plan.resource_changes[1].change.after.input + ' ' + plan.resource_changes[0].change.before.output.password`})
	for _, r := range p.Evaluate(context.Background(), Input{Plan: d}) {
		if strings.Contains(r.Message, "s3cret") {
			t.Errorf("a message shows a secret: %s", r.Message)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name string
		rule policyv1.PolicyRule
		want string
	}{
		{"syntax", policyv1.PolicyRule{Name: "r", Expression: `plan.resource_changes.all(rc, `}, "rule r: expression: ERROR: <input>:1:31: Syntax error"},
		{"not a bool", policyv1.PolicyRule{Name: "r", Expression: `'yes'`}, "rule r: expression: must give a bool, not a string"},
		{"message not a string", policyv1.PolicyRule{Name: "r", Expression: `true`, MessageExpression: `1`}, "rule r: messageExpression: must give a string, not a int"},
		{"undeclared variable", policyv1.PolicyRule{Name: "r", Expression: `request.size() > 0`}, "undeclared reference to 'request'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile("p", "", "u", 1, policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{tc.rule}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			// a rule that does not compile denies every plan it sees
			res := p.Evaluate(context.Background(), Input{Plan: fixture(t, "create.json")})
			if len(res) != 1 || res[0].Passed || res[0].Enforcement != policyv1.EnforcementDeny {
				t.Errorf("a rule that does not compile gave %+v, want a Deny", res)
			}
		})
	}
}

func TestCacheCompilesOncePerGeneration(t *testing.T) {
	var c Cache
	spec := policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "r", Expression: "true"}}}
	a, _ := c.Compile("p", "", "u", 1, spec)
	b, _ := c.Compile("p", "", "u", 1, spec)
	if a != b {
		t.Error("the same generation was compiled twice")
	}
	if n, _ := c.Compile("p", "", "u", 2, spec); n == a {
		t.Error("a new generation was not compiled")
	}
}

func TestMatches(t *testing.T) {
	mk := func(ns string, m policyv1.PolicyMatch) *Policy {
		p, err := Compile("p", ns, "u", 1, policyv1.PlanPolicySpec{Match: m, Rules: []policyv1.PolicyRule{{Name: "r", Expression: "true"}}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bucket := Target{Group: "storage.aws.terraplane.io", Kind: "S3Bucket", Class: "standard", Namespace: "terraplane-system", ClaimNamespace: "shop",
		NamespaceLabels: map[string]string{"env": "dev"}}
	cases := []struct {
		name string
		p    *Policy
		want bool
	}{
		{"empty match", mk("", policyv1.PolicyMatch{}), true},
		{"kind in any group", mk("", policyv1.PolicyMatch{Kinds: []policyv1.KindMatch{{Kind: "S3Bucket"}}}), true},
		{"kind in another group", mk("", policyv1.PolicyMatch{Kinds: []policyv1.KindMatch{{APIGroup: "terraform.terraplane.io", Kind: "S3Bucket"}}}), false},
		{"class", mk("", policyv1.PolicyMatch{Classes: []string{"premium"}}), false},
		{"claim's namespace", mk("", policyv1.PolicyMatch{Namespaces: []string{"shop"}}), true},
		{"not the resource's own namespace", mk("", policyv1.PolicyMatch{Namespaces: []string{"terraplane-system"}}), false},
		{"selector", mk("", policyv1.PolicyMatch{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "production"}}}), false},
		{"namespaced, in the claim's namespace", mk("shop", policyv1.PolicyMatch{}), true},
		{"namespaced, elsewhere", mk("other", policyv1.PolicyMatch{}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Matches(bucket); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCouldCheck: a policy of every type could check any plan; one of named types only
// the plans of a configuration that declares one of them, or whose types are not all
// known.
func TestCouldCheck(t *testing.T) {
	every := &Policy{}
	buckets := &Policy{Match: policyv1.PolicyMatch{ResourceTypes: []string{"aws_s3_bucket", "google_storage_bucket"}}}
	for name, tc := range map[string]struct {
		p        *Policy
		types    []string
		complete bool
		want     bool
	}{
		"every type, no resource":            {every, nil, true, true},
		"named types, one declared":          {buckets, []string{"aws_s3_bucket", "random_id"}, true, true},
		"named types, none declared":         {buckets, []string{"aws_sqs_queue", "random_id"}, true, false},
		"named types, none known but unsure": {buckets, []string{"random_id"}, false, true},
	} {
		if got := tc.p.CouldCheck(tc.types, tc.complete); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
