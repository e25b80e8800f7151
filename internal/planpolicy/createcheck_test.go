package planpolicy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	"terraplane.io/terraplane/internal/plugins"
)

// creates reads a plan JSON fixture of creates as the gate would give them: each
// change's planned value, unknown and sensitive marks, and provider; and the address
// of each type.
func creates(t *testing.T, name string) (out []plugins.PlannedCreate, raw []any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		ResourceChanges []any `json:"resource_changes"`
	}
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	for _, c := range plan.ResourceChanges {
		rc := c.(map[string]any)
		ch := rc["change"].(map[string]any)
		out = append(out, plugins.PlannedCreate{Address: rc["address"].(string), Provider: rc["provider_name"].(string), Type: rc["type"].(string),
			After: ch["after"], AfterUnknown: ch["after_unknown"], AfterSensitive: ch["after_sensitive"]})
	}
	return out, plan.ResourceChanges
}

// TestCreateChangesAsTerraformShowsThem: the creates the gate reads become the same
// resource changes terraform's plan JSON of the create shows.
func TestCreateChangesAsTerraformShowsThem(t *testing.T) {
	cs, want := creates(t, "create.json")
	if d := cmp.Diff(want, createChanges(cs)); d != "" {
		t.Errorf("resource changes (-terraform +gate):\n%s", d)
	}
	for addr, index := range map[string]any{`aws_s3_bucket.b[0]`: 0, `module.m.aws_s3_bucket.b["a.b"]`: "a.b"} {
		rc := createChanges([]plugins.PlannedCreate{{Address: addr, Type: "aws_s3_bucket"}})[0].(map[string]any)
		if rc["name"] != "b" || rc["index"] != index {
			t.Errorf("%s: name %v, index %#v", addr, rc["name"], rc["index"])
		}
	}
}

// TestCheckCreate: a create passes only when every rule passes, and the report holds
// every result; a Warn fails the check as a Deny does (it is given with a kept plan);
// sensitive values and secrets are redacted before a rule sees them.
func TestCheckCreate(t *testing.T) {
	cs, _ := creates(t, "create.json")
	cs[0].After.(map[string]any)["tags"] = map[string]any{"cost-center": "cc-7", "token": "s3cret-token"}
	check := func(rules ...policyv1.PolicyRule) (bool, []Result) {
		t.Helper()
		cc := CreateCheck{Namespace: "shop", Object: map[string]any{"kind": "S3Bucket"},
			Policies: []Source{{Name: "guard", UID: "u1", Generation: 1, Spec: policyv1.PlanPolicySpec{Rules: rules}}}}
		raw, err := json.Marshal(cc)
		if err != nil {
			t.Fatal(err)
		}
		report, pass, err := (&Cache{}).CheckCreate(context.Background(), raw, cs, []string{"s3cret-token"})
		if err != nil {
			t.Fatal(err)
		}
		var results []Result
		if err := json.Unmarshal(report, &results); err != nil {
			t.Fatal(err)
		}
		return pass, results
	}
	tagged := policyv1.PolicyRule{Name: "tagged", Expression: `plan.resource_changes.all(rc, rc.type != 'aws_s3_bucket' || 'cost-center' in rc.change.after.tags)`}
	if pass, results := check(tagged); !pass || len(results) != 1 || !results[0].Passed {
		t.Errorf("a passing rule: pass %v, %+v", pass, results)
	}
	warn := policyv1.PolicyRule{Name: "named", Enforcement: policyv1.EnforcementWarn, Message: "name it",
		Expression: `plan.resource_changes.all(rc, rc.type != 'aws_s3_bucket' || rc.change.after.?bucket.orValue('') == 'never')`}
	if pass, results := check(tagged, warn); pass || len(results) != 2 || results[1].Passed {
		t.Errorf("a Warn rule that fails: pass %v, %+v", pass, results)
	}
	secret := policyv1.PolicyRule{Name: "secret", Expression: `plan.resource_changes.all(rc, rc.type != 'aws_s3_bucket' || rc.change.after.tags.token == '(sensitive value)')`}
	if pass, results := check(secret); !pass {
		t.Errorf("a rule saw a secret unredacted: %+v", results)
	}
}
