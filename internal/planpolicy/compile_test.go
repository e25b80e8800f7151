package planpolicy

import (
	"errors"
	"strings"
	"testing"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
)

// TestCompileTypes: plan and namespaceObject are typed, object, claim and the values of
// a change dynamic; a rule that does not type (a field plan or namespaceObject lacks, an
// operator on the wrong types) is named in the *CompileError with CEL's message, and a
// misspelt field is told the fields there are.
func TestCompileTypes(t *testing.T) {
	cases := []struct {
		name, expr string
		want       []string // substrings of the error; nil: compiles
	}{
		{"fine", `plan.resource_changes.all(rc, rc.change.after == null || rc.change.after.?acl.orValue('') != 'public-read')`, nil},
		{"resource fields are dynamic", `plan.resource_changes.all(rc, has(rc.change.after.anything) || rc.change.before.x.y == 1)`, nil},
		{"labels", `namespaceObject.metadata.labels.?env.orValue('') == 'production' && object.spec.x == claim.spec.y`, nil},
		{"syntax", `plan.resource_changes.all(rc, rc.type ==`, []string{"rule r: expression: ERROR: <input>:1:", "Syntax error"}},
		{"a field the plan lacks", `plan.resource_changes.all(rc, rc.chnage.after != null)`,
			[]string{"undefined field 'chnage'", "plan.resource_changes[] has action_reason, address, change,", "its change has actions, after,"}},
		{"a misspelt list", `plan.resource_change.size() < 5`, []string{"undefined field 'resource_change'"}},
		{"a field the namespace lacks", `namespaceObject.labels.env == 'x'`, []string{"undefined field 'labels'", "namespaceObject has metadata.name and metadata.labels"}},
		{"types that do not match", `plan.resource_changes.size() > '5'`, []string{"found no matching overload for '_>_'"}},
		{"not a bool", `plan.resource_changes.size()`, []string{"must give a bool, not a int"}},
		{"namespace is reserved", `namespace.metadata.name == 'x'`, []string{"reserved identifier: namespace"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile("p", "", "u", 1, policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "r", Expression: tc.expr}}})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("does not compile: %v", err)
				}
				return
			}
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *CompileError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
