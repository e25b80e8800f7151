package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

const testPolicy = `apiVersion: policy.terraplane.io/v1alpha1
kind: PlanPolicy
metadata:
  name: buckets
spec:
  match:
    resourceTypes: [aws_s3_bucket_public_access_block]
  rules:
  - name: not-public
    expression: plan.resource_changes.all(rc, rc.change.after.block_public_acls)
    message: buckets must not be public
---
apiVersion: policy.terraplane.io/v1alpha1
kind: PlanPolicy
metadata:
  name: destroys
spec:
  rules:
  - name: at-most-one
    enforcement: Warn
    expression: plan.resource_changes.filter(rc, 'delete' in rc.change.actions).size() <= 1
`

// runPolicyTest runs terraplane policy test with args, and returns its output and exit code.
func runPolicyTest(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := rootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"policy", "test"}, args...))
	code := 0
	if cmd, err := root.ExecuteC(); err != nil {
		code = fail(&errOut, cmd, err)
	}
	return out.String() + errOut.String(), code
}

func TestPolicyTest(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	must(t, os.WriteFile(pol, []byte(testPolicy), 0o600))
	bad := filepath.Join(dir, "bad.yaml")
	must(t, os.WriteFile(bad, []byte(strings.Replace(testPolicy, "rc.change.after.block_public_acls)", "rc.change.after.block_public_acls", 1)), 0o600))
	plan := "../../internal/planpolicy/testdata/create.json"

	got, code := runPolicyTest(t, pol, "--plan", plan)
	if code != 1 || !strings.Contains(got, "Deny             buckets/not-public: buckets must not be public (at module.this.aws_s3_bucket_public_access_block.this)") ||
		!strings.Contains(got, "Pass             destroys/at-most-one") {
		t.Errorf("exit %d, output:\n%s", code, got)
	}

	got, code = runPolicyTest(t, pol, "--plan", plan, "-o", "json")
	var report policyReport
	if err := json.Unmarshal([]byte(got[:strings.LastIndex(got, "}")+1]), &report); err != nil {
		t.Fatalf("-o json printed %s: %v", got, err)
	}
	want := []common.PolicyResult{
		{Policy: "buckets", Rule: "not-public", Result: "Deny", Message: "buckets must not be public (at module.this.aws_s3_bucket_public_access_block.this)"},
		{Policy: "destroys", Rule: "at-most-one", Result: "Pass"},
	}
	if diff := cmp.Diff(want, report.Results); diff != "" || code != 1 || !report.Denied {
		t.Errorf("exit %d, results (-want +got):\n%s", code, diff)
	}

	if got, code = runPolicyTest(t, pol, "--plan", "../../internal/planpolicy/testdata/delete.json"); code != 0 ||
		!strings.Contains(got, "Warn             destroys/at-most-one") {
		t.Errorf("a plan without buckets: exit %d, output:\n%s", code, got)
	}
	if got, code = runPolicyTest(t, bad, "--plan", plan); code != 1 || !strings.Contains(got, "rule not-public: expression: ERROR") {
		t.Errorf("a rule that does not compile: exit %d, output:\n%s", code, got)
	}
	if got, code = runPolicyTest(t, pol); code != 2 || !strings.Contains(got, `required flag(s) "plan"`) {
		t.Errorf("without --plan: exit %d, output:\n%s", code, got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
