package planpolicy

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// yamlBlocks are the YAML code blocks of a Markdown file.
var yamlBlocks = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocumentedPolicies evaluates the example policies of docs/policies.md on plan
// fixtures: each example must compile and say what its text says.
func TestDocumentedPolicies(t *testing.T) {
	md, err := os.ReadFile("../../docs/policies.md")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, m := range yamlBlocks.FindAllStringSubmatch(string(md), -1) {
		if strings.Contains(m[1], "apiVersion: policy.terraplane.io") {
			docs = append(docs, m[1])
		}
	}
	pols, err := ReadPolicies([]byte(strings.Join(docs, "\n---\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(pols) != 6 {
		t.Fatalf("docs/policies.md has %d example policies, want 6", len(pols))
	}
	cases := []struct {
		plan   string
		labels map[string]string
		// want are the failed rules, policy/rule: result.
		want map[string]string
	}{
		{"create.json", nil, map[string]string{"buckets-not-public/public-access-blocked": "Deny"}},
		{"update.json", map[string]string{"env": "dev"}, map[string]string{"database-size/at-most-xlarge": "Deny", "shop/guard/in-place": "Warn"}},
		{"update.json", map[string]string{"env": "production"}, map[string]string{"shop/guard/in-place": "Warn"}},
		{"replace.json", nil, map[string]string{"shop/no-eu/outside-eu": "Deny", "shop/guard/destroy-approved": "RequireApproval"}},
		{"delete.json", nil, map[string]string{"destroy-limit/at-most-5": "RequireApproval", "shop/guard/destroy-approved": "RequireApproval"}},
		{"fifty.json", nil, map[string]string{}},
		{"sensitive.json", nil, map[string]string{"shop/guard/in-place": "Warn"}},
		{"untagged.json", nil, map[string]string{"cost-center/tag-required": "Deny", "shop/guard/in-place": "Warn"}},
	}
	for _, tc := range cases {
		t.Run(tc.plan, func(t *testing.T) {
			got := map[string]string{}
			for _, r := range Evaluate(context.Background(), pols, Input{Plan: fixture(t, tc.plan), NamespaceLabels: tc.labels}) {
				if !r.Passed {
					got[r.Policy+"/"+r.Rule] = r.Outcome()
					t.Logf("%s", r)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failed rules (-want +got):\n%s", diff)
			}
		})
	}
}
