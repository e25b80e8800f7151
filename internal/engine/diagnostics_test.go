package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lockBanner is what terraform prints on stderr when the state lock is held.
const lockBanner = `
Error: Error acquiring the state lock

Error message: the state is already locked by another terraform client
Lock Info:
  ID:        6f1f3a6e-6d2f-4f0c-9e0e-1c1b2a3d4e5f
  Path:      
  Operation: OperationTypeApply
  Who:       terraplane@controller-0
  Version:   1.11.4
  Created:   2026-11-24 13:00:00.000000 +0000 UTC
  Info:      


Terraform acquires a state lock to protect the state from being written
by multiple users at the same time. Please resolve the issue above and try
again. For most commands, you can disable locking with the "-lock=false"
flag, but this is not recommended.
`

func TestSummaryOneLine(t *testing.T) {
	framed := "exit status 1\n\n╷\n│ Error: Invalid value for variable\n│ \n│   on variables.tf line 3:\n│ \n│ bucket_name must be lower case\n╵\n"
	json := parseUIStream([]byte(`{"type":"diagnostic","diagnostic":{"severity":"error","summary":"Error acquiring the state lock","detail":"Error message: the state is already locked by another terraform client\nLock Info:\n  ID: abc"}}`)).
		withDiagnostics(errors.New("exit status 1"))
	precondition := parseUIStream([]byte(`{"type":"version","terraform":"1.11.4"}
{"type":"diagnostic","diagnostic":{"severity":"warning","summary":"Deprecated attribute","detail":"use another"}}
{"type":"diagnostic","diagnostic":{"severity":"error","summary":"Resource precondition failed","detail":"Set location, or region (the Provider's region).","address":"module.this.google_storage_bucket.this","snippet":{"context":"resource \"google_storage_bucket\" \"this\"","code":"      condition     = local.location != \"\""}}}`)).
		withDiagnostics(errors.New("exit status 1"))
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"banner":            {errors.New(lockBanner), "Error acquiring the state lock: Error message: the state is already locked by another terraform client"},
		"framed":            {errors.New(framed), "Invalid value for variable: on variables.tf line 3:"},
		"json":              {json, "Error acquiring the state lock: Error message: the state is already locked by another terraform client"},
		"wrapped json":      {fmt.Errorf("terraform apply: %w", json), "Error acquiring the state lock: Error message: the state is already locked by another terraform client"},
		"json precondition": {precondition, "Resource precondition failed: Set location, or region (the Provider's region)."},
		"plain":             {errors.New("read state lock x: forbidden\nmore"), "read state lock x: forbidden"},
	} {
		got := Summary(c.err)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: Summary (-want +got):\n%s", name, diff)
		}
		if strings.Contains(got, "\n") {
			t.Errorf("%s: summary has a line break", name)
		}
	}
	if long := Summary(errors.New(strings.Repeat("x", 1000))); len(long) != maxSummary { // no cause: cut at its end
		t.Errorf("long summary is %d bytes, want %d", len(long), maxSummary)
	}
}

// TestPlanAndDestroyErrorsFromDiagnostics runs the real terraform: a failed plan or
// destroy is summarised from its -json diagnostic, so that the condition shows a
// precondition's error_message or a provisioner's error (where the banner shows the
// source first), with the workspace's secret values redacted.
func TestPlanAndDestroyErrorsFromDiagnostics(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	env := map[string]string{"TERRAPLANE_TEST_VALUE": "s3cr3t-value"}
	for _, tc := range []struct {
		name, main string
		run        func(Workspace) error
		want       string
	}{
		{"plan precondition", `variable "location" {
  type    = string
  default = ""
}

resource "terraform_data" "x" {
  lifecycle {
    precondition {
      condition     = var.location != ""
      error_message = "Set location, or region (the Provider's region); not s3cr3t-value."
    }
  }
}
`, func(ws Workspace) error { _, err := e.Plan(ctx, ws, PlanOptions{}); return err },
			"Resource precondition failed: Set location, or region (the Provider's region); not (redacted)."},
		{"destroy provisioner", `resource "terraform_data" "x" {
  provisioner "local-exec" {
    when    = destroy
    command = "exit 3"
  }
}
`, func(ws Workspace) error {
			if _, err := e.Create(ctx, ws); err != nil {
				t.Fatal(err)
			}
			return e.Destroy(ctx, ws)
		}, "local-exec provisioner error: Error running command 'exit 3': exit status 3. Output:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := Workspace{ID: strings.ReplaceAll(tc.name, " ", "-"), Files: map[string][]byte{"main.tf": []byte(tc.main)}, Env: env}
			err := tc.run(ws)
			if err == nil {
				t.Fatal("want an error")
			}
			if diff := cmp.Diff(tc.want, Summary(err)); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "s3cr3t-value") {
				t.Errorf("error leaks the secret: %v", err)
			}
		})
	}
}

func TestUserFault(t *testing.T) {
	for _, c := range []struct {
		text, want string
	}{
		{"Error: creating S3 Bucket (b): operation error S3: CreateBucket, https response error StatusCode: 403, RequestID: 1, HostID: 2, api error AccessDenied: Access Denied.", FaultAccessDenied},
		{"Error: creating IAM Role (r): operation error IAM: CreateRole, api error EntityAlreadyExists: Role with name r already exists.", FaultAlreadyExists},
		{"Error: creating S3 Bucket (b): operation error S3: CreateBucket, https response error StatusCode: 409, api error BucketAlreadyOwnedByYou: yours", FaultAlreadyExists},
		{"Error: Invalid value for input variable\n\nThe given value is not suitable for var.days: a number is required.", FaultInvalidInput},
		{"Error: reading S3 Bucket (b): operation error S3: HeadBucket, https response error StatusCode: 503, api error SlowDown", ""},
		{"Error: Provider produced inconsistent result after apply", ""},
		{"Error: creating EC2 Instance: operation error EC2: RunInstances, api error UnauthorizedOperation: You are not authorized", FaultAccessDenied},
		{"Error: googleapi: Error 403: forbidden, StatusCode: 403 ", FaultAccessDenied},
		{"Error: api error AccessDeniedException: no", FaultAccessDenied},
		{"Error: StatusCode: 4031", ""},
		{"Error: a database named app Already Exists", FaultAlreadyExists},
		{"Error: Missing required argument\n\nThe argument \"name\" is required", FaultInvalidInput},
		{"Error: Unsupported argument", FaultInvalidInput},
		{"Error: api error Throttling: Rate exceeded", ""},
		{"Error: Unreadable module directory\n\nUnable to evaluate directory symlink: lstat modules: no such file or directory", FaultModuleIncomplete},
		{"Error: Module not installed\n\nThis module is not yet installed. Run \"terraform init\" to install all modules required by this configuration.", FaultModuleIncomplete},
	} {
		got, ok := UserFault(errors.New(c.text))
		if got != c.want || ok != (c.want != "") {
			t.Errorf("UserFault(%.60q) = %q, %v; want %q", c.text, got, ok, c.want)
		}
	}
	if got, ok := UserFault(nil); got != "" || ok {
		t.Errorf("UserFault(nil) = %q, %v", got, ok)
	}
}

// TestSummaryKeepsTheErrorCode: request and host ids never push a cloud API's error code
// out of the clipped summary.
func TestSummaryKeepsTheErrorCode(t *testing.T) {
	host := strings.Repeat("Zm9vYmFy", 30)
	err := errors.New("Error: creating S3 Bucket (photos): operation error S3: CreateBucket, https response error StatusCode: 403, RequestID: 17A2B3C4D5E6F7A8, HostID: " + host + ", api error AccessDenied: Access Denied.")
	if got := Summary(err); !strings.Contains(got, "api error AccessDenied: Access Denied.") || strings.Contains(got, host) {
		t.Errorf("Summary = %q, want the error code kept and the host id left out", got)
	}
}

// TestErrorsNameTheVariable: a diagnostic about a value an input variable holds (a type
// terraform cannot convert inside an any, say) names the variable and its value in the
// one-line summary, and is a fault the user must fix, whatever terraform calls it.
func TestErrorsNameTheVariable(t *testing.T) {
	stream := func(diag string) error {
		return parseUIStream([]byte(`{"type":"diagnostic","diagnostic":` + diag + `}`)).withDiagnostics(errors.New("exit status 1"))
	}
	for name, c := range map[string]struct {
		diag, summary, fault string
	}{
		"an operand of the wrong type": {
			diag:    `{"severity":"error","summary":"Invalid operand","detail":"Unsuitable value for left operand: a number is required.","snippet":{"code":"days = var.lifecycle_rule.days + 1","values":[{"traversal":"var.lifecycle_rule.days","statement":"is \"thirty\""}]}}`,
			summary: `variable lifecycle_rule: Invalid operand: Unsuitable value for left operand: a number is required (var.lifecycle_rule.days is "thirty")`,
			fault:   FaultInvalidInput,
		},
		"an element a for expression takes from a variable": {
			diag:    `{"severity":"error","summary":"Invalid operand","detail":"Unsuitable value for left operand: a number is required.","snippet":{"code":"  days = [for rule in var.lifecycle_rule : rule.days + 0]","values":[{"traversal":"rule.days","statement":"is \"thirty\""}]}}`,
			summary: `variable lifecycle_rule: Invalid operand: Unsuitable value for left operand: a number is required (rule.days is "thirty")`,
			fault:   FaultInvalidInput,
		},
		"a key and a value a for expression takes from a variable": {
			diag:    `{"severity":"error","summary":"Invalid function argument","detail":"Invalid value.","snippet":{"code":"  x = { for k, v in var.cors : k => upper(v) }","values":[{"traversal":"v","statement":"is object with no attributes"}]}}`,
			summary: `variable cors: Invalid function argument: Invalid value (v is object with no attributes)`,
			fault:   FaultInvalidInput,
		},
		"a for expression over a local names no variable": {
			diag:    `{"severity":"error","summary":"Invalid operand","detail":"Unsuitable value for left operand: a number is required.","snippet":{"code":"  days = [for rule in local.rules : rule.days + 0]","values":[{"traversal":"rule.days","statement":"is \"thirty\""}]}}`,
			summary: `Invalid operand: Unsuitable value for left operand: a number is required.`,
		},
		"an attribute of a list element": {
			diag:    `{"severity":"error","summary":"Unsupported attribute","detail":"This object does not have an attribute named \"dayz\".","snippet":{"values":[{"traversal":"var.rules[0]","statement":"is object with 1 attribute \"dayz\""}]}}`,
			summary: `variable rules: Unsupported attribute: This object does not have an attribute named "dayz" (var.rules[0] is object with 1 attribute "dayz")`,
			fault:   FaultInvalidInput,
		},
		"two variables": {
			diag:    `{"severity":"error","summary":"Invalid function argument","detail":"Invalid value.","snippet":{"values":[{"traversal":"var.a","statement":"is \"x\""},{"traversal":"var.b","statement":"has a sensitive value"}]}}`,
			summary: `variables a, b: Invalid function argument: Invalid value (var.a is "x", var.b has a sensitive value)`,
			fault:   FaultInvalidInput,
		},
		"a provider's error names no variable": {
			diag:    `{"severity":"error","summary":"creating S3 Bucket (b)","detail":"operation error S3: CreateBucket, StatusCode: 503, api error SlowDown","snippet":{"values":[]}}`,
			summary: `creating S3 Bucket (b): operation error S3: CreateBucket, StatusCode: 503, api error SlowDown`,
		},
		"a precondition keeps its author's message": {
			diag:    `{"severity":"error","summary":"Resource precondition failed","detail":"Set location.","snippet":{"values":[{"traversal":"var.location","statement":"is \"\""}]}}`,
			summary: `Resource precondition failed: Set location.`,
		},
		"values of locals name no variable": {
			diag:    `{"severity":"error","summary":"Invalid index","detail":"The given key does not identify an element.","snippet":{"values":[{"traversal":"local.zones","statement":"is empty list of string"}]}}`,
			summary: `Invalid index: The given key does not identify an element.`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := stream(c.diag)
			if diff := cmp.Diff(c.summary, Summary(err)); diff != "" {
				t.Errorf("Summary (-want +got):\n%s", diff)
			}
			if got, _ := UserFault(err); got != c.fault {
				t.Errorf("UserFault = %q, want %q", got, c.fault)
			}
		})
	}
}

// TestSummarize: the first error's summary with the first line of its detail, colours and
// frames removed, the detail left out when the summary holds it already; without an
// error, the first line.
func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", ""},
		{"colours", "\x1b[31m╷\n│ \x1b[1m\x1b[31mError: \x1b[0m\x1b[1mBoom\x1b[0m\n│ \n│ why it broke\n╵\x1b[0m", "Boom: why it broke"},
		{"after the context it is wrapped in", "terraform apply: Error: Boom\n\nwhy", "Boom: why"},
		{"a summary ending in a colon", "Error: Failed:\n\n  the reason", "Failed: the reason"},
		{"detail already in the summary", "Error: bucket b exists\n\nexists", "bucket b exists"},
		{"no detail", "Error: Boom", "Boom"},
		{"the first error counts", "Error: First\n\none\n\nError: Second\n\ntwo", "First: one"},
		{"no error line", "\n\n│ exit status 1\nmore", "exit status 1"},
		{"request ids left out", "Error: failed: RequestID: 1a2b, HostID: xyz, api error Boom", "failed: api error Boom"},
	} {
		if got := summarize(tc.text); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if Summary(nil) != "" {
		t.Error("no error, no summary")
	}
}

// TestClip: a summary is trimmed; past maxSummary its cause is kept whole and only what
// comes before it is cut, its start kept; a text with no cause is cut at its end.
func TestClip(t *testing.T) {
	long := strings.Repeat("x", maxSummary)
	for _, tc := range []struct {
		name, in  string
		cause     int
		want      string
		wantBytes int
	}{
		{name: "short", in: "  short  ", want: "short"},
		{name: "no cause", in: long + "y", wantBytes: maxSummary},
		{name: "a cause after a long context", in: "creating queue (q): " + long + ": the cause", cause: len("creating queue (q): " + long + ": "),
			want: "creating queue (q): " + long[:maxSummary-len("creating queue (q): ... the cause")] + "... the cause"},
		{name: "a cause longer than the summary is kept whole", in: "creating queue (q): " + long + "z", cause: len("creating queue (q): "),
			want: "creating queue (q): " + long + "z"},
		{name: "a cause past maxCause is cut at its end", in: "op: " + strings.Repeat("c", maxCause+10), cause: len("op: "),
			want: "op: " + strings.Repeat("c", maxCause-3) + "..."},
		{name: "characters are not split", in: strings.Repeat("é", maxSummary) + ": cause", cause: len(strings.Repeat("é", maxSummary) + ": "),
			want: strings.Repeat("é", (maxSummary-len("... cause"))/2) + "... cause"},
	} {
		got := clip(tc.in, tc.cause)
		if tc.wantBytes != 0 {
			if len(got) != tc.wantBytes || !strings.HasSuffix(got, "...") {
				t.Errorf("%s: %d bytes %q, want %d ending in ...", tc.name, len(got), got, tc.wantBytes)
			}
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: clip (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestSummaryKeepsTheCauseWhole: a long error is cut before its cause, never in it: the
// cloud API's error code and message, a diagnostic's detail, the last part of a chain.
func TestSummaryKeepsTheCauseWhole(t *testing.T) {
	policy := `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:` + strings.Repeat("dead-letters-", 12) + `","maxReceiveCount":"5"}`
	cause := "api error InvalidAttributeValue: Invalid value for the parameter RedrivePolicy. Reason: Value " + policy + " for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount."
	for name, c := range map[string]struct {
		text, start, cause string
	}{
		"a cloud API's error": {
			text:  "Error: creating SQS Queue (orders): operation error SQS: CreateQueue, https response error StatusCode: 400, RequestID: 4f7c, " + cause,
			start: "creating SQS Queue (orders): ", cause: cause,
		},
		"a diagnostic's detail": {
			text:  "Error: " + strings.Repeat("a long summary ", 20) + "\n\nThe detail that says what to change: " + strings.Repeat("w", 150),
			start: "a long summary", cause: "The detail that says what to change: " + strings.Repeat("w", 150),
		},
		"an error chain": {
			text:  "render workspace: " + strings.Repeat("module source, ", 20) + ": read file x.tf: permission denied",
			start: "render workspace: ", cause: "permission denied",
		},
	} {
		got := Summary(errors.New(c.text))
		if !strings.HasSuffix(got, c.cause) || !strings.HasPrefix(got, c.start) {
			t.Errorf("%s: Summary = %q, want it to start with %q and end with the whole cause", name, got, c.start)
		}
		if len(got) > max(maxSummary, minHead+len("... ")+len(c.cause)) {
			t.Errorf("%s: Summary is %d bytes", name, len(got))
		}
	}
}

// TestAttributeErrorsNameTheVariable: an error a provider raises about a resource's
// attribute names the input variable the attribute is set from (and the attribute), and is
// a fault the user must fix; an attribute set from no variable, or an error about the
// whole resource, names none.
func TestAttributeErrorsNameTheVariable(t *testing.T) {
	for name, c := range map[string]struct {
		diag, summary, fault string
	}{
		"a value out of range": {
			diag:    `{"severity":"error","summary":"expected visibility_timeout_seconds to be in the range (0 - 43200), got 50000","detail":"","address":"module.this.aws_sqs_queue.this[0]","snippet":{"context":"resource \"aws_sqs_queue\" \"this\"","code":"  visibility_timeout_seconds = var.visibility_timeout_seconds","values":[]}}`,
			summary: "variable visibility_timeout_seconds: expected visibility_timeout_seconds to be in the range (0 - 43200), got 50000 (attribute visibility_timeout_seconds of module.this.aws_sqs_queue.this[0])",
			fault:   FaultInvalidInput,
		},
		"a value with a detail, from two variables": {
			diag:    `{"severity":"error","summary":"invalid value for name","detail":"must match ^[a-z]+$.","address":"module.this.aws_sqs_queue.this","snippet":{"code":"  name = var.use_name_prefix ? null : var.name","values":[]}}`,
			summary: "variables use_name_prefix, name: invalid value for name: must match ^[a-z]+$ (attribute name of module.this.aws_sqs_queue.this)",
			fault:   FaultInvalidInput,
		},
		"an attribute set from a local": {
			diag:    `{"severity":"error","summary":"expected delay_seconds to be in the range (0 - 900), got 1000","detail":"","address":"module.this.aws_sqs_queue.this","snippet":{"code":"  delay_seconds = local.delay","values":[]}}`,
			summary: "expected delay_seconds to be in the range (0 - 900), got 1000",
		},
		"an error about the resource": {
			diag:    `{"severity":"error","summary":"creating SQS Queue (q): operation error SQS: CreateQueue, StatusCode: 503, api error ServiceUnavailable","detail":"","address":"module.this.aws_sqs_queue.this","snippet":{"code":"resource \"aws_sqs_queue\" \"this\" {","values":[]}}`,
			summary: "creating SQS Queue (q): operation error SQS: CreateQueue, StatusCode: 503, api error ServiceUnavailable",
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := parseUIStream([]byte(`{"type":"diagnostic","diagnostic":` + c.diag + `}`)).withDiagnostics(errors.New("exit status 1"))
			if diff := cmp.Diff(c.summary, Summary(err)); diff != "" {
				t.Errorf("Summary (-want +got):\n%s", diff)
			}
			if got, _ := UserFault(err); got != c.fault {
				t.Errorf("UserFault = %q, want %q", got, c.fault)
			}
		})
	}
}

// TestTaintedReplacement runs the real terraform: a create whose provisioner fails leaves
// the object tainted, and the next plan's replacement of it says so.
func TestTaintedReplacement(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	main := `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "exit 3"
  }
}
`
	ws := Workspace{ID: "tainted", Files: map[string][]byte{"main.tf": []byte(main)}}
	if _, err := e.Create(ctx, ws); err == nil {
		t.Fatal("the create's provisioner should have failed")
	}
	p, err := e.Plan(ctx, ws, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{Address: "terraform_data.x", Actions: []string{"delete", "create"}, Tainted: true}}
	if diff := cmp.Diff(want, p.Changes); diff != "" {
		t.Errorf("changes of the plan after a failed create (-want +got):\n%s", diff)
	}
}
