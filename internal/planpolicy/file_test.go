package planpolicy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
)

// TestReadPolicies: of a YAML stream, the plan policies of both kinds are compiled in
// order, a namespaced one without a namespace in "default", each with its own key;
// other kinds, other API versions and empty documents are skipped.
func TestReadPolicies(t *testing.T) {
	const stream = `apiVersion: v1
kind: ConfigMap
metadata: {name: not-a-policy}
---
apiVersion: policy.terraplane.io/v1alpha1
kind: PlanPolicy
metadata: {name: no-deletes, generation: 3}
spec:
  rules:
  - name: r
    enforcement: Warn
    expression: "true"
---
---
apiVersion: policy.terraplane.io/v1alpha2
kind: PlanPolicy
metadata: {name: a-version-this-controller-does-not-read}
---
apiVersion: policy.terraplane.io/v1alpha1
kind: NamespacedPlanPolicy
metadata: {name: shop-guard}
spec:
  rules: [{name: r, expression: "true"}]
---
apiVersion: policy.terraplane.io/v1alpha1
kind: NamespacedPlanPolicy
metadata: {name: team-guard, namespace: team}
spec:
  match: {classes: [standard]}
  rules: [{name: r, expression: "true"}]
`
	pols, err := ReadPolicies([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	keys := map[string]bool{}
	for _, p := range pols {
		got = append(got, p.Name+" in "+p.Namespace+": "+string(p.Rules[0].Enforcement)+" "+strings.Join(p.Match.Classes, ","))
		keys[p.Key] = true
	}
	want := []string{"no-deletes in : Warn ", "default/shop-guard in default: Deny ", "team/team-guard in team: Deny standard"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("policies (-want +got):\n%s", d)
	}
	if len(keys) != len(pols) {
		t.Errorf("keys %v: two policies of one file share a key", keys)
	}
	if pols[0].Key != "1/3" {
		t.Errorf("key %q, want the document's index and the generation", pols[0].Key)
	}
}

// TestReadPoliciesRefuses: a document that is not YAML, a policy with a field its kind
// lacks, and a rule that does not compile are errors naming the document or the policy
// and the rule.
func TestReadPoliciesRefuses(t *testing.T) {
	const head = "apiVersion: policy.terraplane.io/v1alpha1\nkind: PlanPolicy\nmetadata: {name: p}\n"
	for name, tc := range map[string]struct {
		stream string
		want   []string
	}{
		"not YAML":         {"---\n{]\n", []string{"document 2"}},
		"a misspelt field": {"kind: ConfigMap\n---\n" + head + "spec:\n  rulez: []\n", []string{"document 2 (PlanPolicy p)", "rulez"}},
		"a rule that does not compile": {head + "spec:\n  rules: [{name: big, expression: \"plan.size\"}]\n",
			[]string{"PlanPolicy p", "rule big: expression"}},
	} {
		t.Run(name, func(t *testing.T) {
			pols, err := ReadPolicies([]byte(tc.stream))
			if err == nil {
				t.Fatalf("ReadPolicies = %d policies, want an error", len(pols))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestFailed picks the failed results of one enforcement, in order.
func TestFailed(t *testing.T) {
	results := []Result{
		{Rule: "a", Enforcement: policyv1.EnforcementDeny},
		{Rule: "b", Enforcement: policyv1.EnforcementDeny, Passed: true},
		{Rule: "c", Enforcement: policyv1.EnforcementWarn},
		{Rule: "d", Enforcement: policyv1.EnforcementDeny},
	}
	rules := func(rs []Result) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Rule)
		}
		return out
	}
	for e, want := range map[policyv1.Enforcement][]string{
		policyv1.EnforcementDeny: {"a", "d"}, policyv1.EnforcementWarn: {"c"}, policyv1.EnforcementRequireApproval: nil,
	} {
		if d := cmp.Diff(want, rules(Failed(results, e))); d != "" {
			t.Errorf("Failed(%s) (-want +got):\n%s", e, d)
		}
	}
}

// count is a counter's value.
func count(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestObserve counts every rule evaluated, and each failure under its enforcement's
// counter only.
func TestObserve(t *testing.T) {
	if err := RegisterMetrics(); err != nil {
		t.Fatal(err)
	}
	if err := RegisterMetrics(); err != nil {
		t.Errorf("a second registration: %v", err)
	}
	const kind = "ObserveTestKind"
	Observe(kind, []Result{
		{Policy: "p", Rule: "deny", Enforcement: policyv1.EnforcementDeny},
		{Policy: "p", Rule: "deny", Enforcement: policyv1.EnforcementDeny},
		{Policy: "p", Rule: "hold", Enforcement: policyv1.EnforcementRequireApproval},
		{Policy: "p", Rule: "warn", Enforcement: policyv1.EnforcementWarn},
		{Policy: "p", Rule: "pass", Enforcement: policyv1.EnforcementDeny, Passed: true},
	})
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"evaluations of deny", count(t, evaluationsTotal.WithLabelValues(kind, "p", "deny")), 2},
		{"evaluations of pass", count(t, evaluationsTotal.WithLabelValues(kind, "p", "pass")), 1},
		{"denials of deny", count(t, denialsTotal.WithLabelValues(kind, "p", "deny")), 2},
		{"denials of pass", count(t, denialsTotal.WithLabelValues(kind, "p", "pass")), 0},
		{"approvals of hold", count(t, approvalsTotal.WithLabelValues(kind, "p", "hold")), 1},
		{"denials of hold", count(t, denialsTotal.WithLabelValues(kind, "p", "hold")), 0},
		{"warnings of warn", count(t, warningsTotal.WithLabelValues(kind, "p", "warn")), 1},
		{"denials of warn", count(t, denialsTotal.WithLabelValues(kind, "p", "warn")), 0},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestMatchesKind: what a policy change looks at again is every resource of the kinds
// and classes it names, in any group when it names none, whatever the namespace.
func TestMatchesKind(t *testing.T) {
	mk := func(ns string, m policyv1.PolicyMatch) *Policy {
		p, err := Compile("p", ns, "u", 1, policyv1.PlanPolicySpec{Match: m})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const group = "storage.aws.terraplane.io"
	for _, tc := range []struct {
		name string
		p    *Policy
		kind string
		want bool
	}{
		{"no match", mk("", policyv1.PolicyMatch{}), "S3Bucket", true},
		{"kind in any group", mk("", policyv1.PolicyMatch{Kinds: []KindMatch{{Kind: "S3Bucket"}}}), "S3Bucket", true},
		{"kind in its group", mk("", policyv1.PolicyMatch{Kinds: []KindMatch{{APIGroup: group, Kind: "S3Bucket"}}}), "S3Bucket", true},
		{"kind in another group", mk("", policyv1.PolicyMatch{Kinds: []KindMatch{{APIGroup: "x.terraplane.io", Kind: "S3Bucket"}}}), "S3Bucket", false},
		{"another kind", mk("", policyv1.PolicyMatch{Kinds: []KindMatch{{Kind: "S3Bucket"}}}), "Queue", false},
		{"its class", mk("", policyv1.PolicyMatch{Classes: []string{"standard", "premium"}}), "S3Bucket", true},
		{"namespaces do not matter", mk("elsewhere", policyv1.PolicyMatch{Namespaces: []string{"nowhere"}}), "S3Bucket", true},
	} {
		if got := tc.p.MatchesKind(group, tc.kind, "premium"); got != tc.want {
			t.Errorf("%s: MatchesKind = %v, want %v", tc.name, got, tc.want)
		}
	}
	if mk("", policyv1.PolicyMatch{Classes: []string{"standard"}}).MatchesKind(group, "S3Bucket", "") {
		t.Error("a policy of a class matches resources of none")
	}
}

// TestCompilePolicy: a namespaced policy is named namespace/name and keyed by uid and
// generation; a rule's enforcement defaults to Deny; a namespace selector that does not
// parse is a compile error, and the policy then matches no namespace rather than all.
func TestCompilePolicy(t *testing.T) {
	p, err := Compile("guard", "shop", "uid-1", 7, policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{
		{Name: "a", Expression: "true"}, {Name: "b", Expression: "true", Enforcement: policyv1.EnforcementWarn}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "shop/guard" || p.Key != "uid-1/7" || p.Rules[0].Enforcement != policyv1.EnforcementDeny || p.Rules[1].Enforcement != policyv1.EnforcementWarn {
		t.Errorf("policy %+v", p)
	}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near", Values: []string{"x"}}}}
	p, err = Compile("guard", "", "uid-2", 1, policyv1.PlanPolicySpec{Match: policyv1.PolicyMatch{NamespaceSelector: bad}})
	var ce *CompileError
	if !errors.As(err, &ce) || len(ce.Rules) != 1 || !strings.HasPrefix(ce.Rules[0], "spec.match.namespaceSelector: ") {
		t.Fatalf("Compile with a bad selector = %v, want a CompileError naming the selector", err)
	}
	if p.Matches(Target{Kind: "S3Bucket", Namespace: "shop", NamespaceLabels: map[string]string{"env": "x"}}) {
		t.Error("a policy whose selector does not parse matches a namespace")
	}
}

// TestFieldHint: a rule naming a field the plan's types lack is told which fields there
// are; other errors get no hint.
func TestFieldHint(t *testing.T) {
	_, err := Compile("p", "", "u", 1, policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{
		{Name: "typo", Expression: `plan.resource_changes.all(rc, rc.chnage.after.x == 1)`}}})
	if err == nil || !strings.Contains(err.Error(), "undefined field") || !strings.Contains(err.Error(), "resource_changes[] has action_reason, address, change,") {
		t.Errorf("a misspelt field: %v, want the fields named", err)
	}
	if hint := fieldHint("ERROR: <input>:1:1: Syntax error"); hint != "" {
		t.Errorf("a syntax error got the hint %q", hint)
	}
}

// TestCacheForget: a forgotten policy is compiled again even at the same generation, and
// a policy that does not compile gives its error from the cache too.
func TestCacheForget(t *testing.T) {
	var c Cache
	spec := policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "r", Expression: "true"}}}
	a, _ := c.Compile("p", "", "u", 1, spec)
	c.Forget("u")
	if b, _ := c.Compile("p", "", "u", 1, spec); b == a {
		t.Error("a forgotten policy came back from the cache")
	}
	broken := policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "r", Expression: "1"}}}
	first, err1 := c.Compile("q", "", "v", 1, broken)
	second, err2 := c.Compile("q", "", "v", 1, broken)
	if err1 == nil || err2 == nil || first != second {
		t.Errorf("a broken policy: %v then %v, the same compiled policy %v", err1, err2, first == second)
	}
	res := second.Evaluate(context.Background(), Input{Plan: fixture(t, "create.json")})
	if len(res) != 1 || res[0].Passed {
		t.Errorf("the cached broken policy gave %+v, want its rule to deny", res)
	}
}
