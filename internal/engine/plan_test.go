package engine

import (
	"encoding/json"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
)

// replacementPlan is the JSON of a plan that replaces a bucket whose name changed and
// updates a sensitive password in place.
const replacementPlan = `{
  "format_version": "1.2",
  "planned_values": {"root_module": {"child_modules": [{"resources": [
    {"address": "module.main.aws_s3_bucket.this", "mode": "managed"},
    {"address": "module.main.random_password.p", "mode": "managed"},
    {"address": "module.main.data.aws_caller_identity.me", "mode": "data"}]}]}},
  "resource_changes": [
    {"address": "module.main.aws_s3_bucket.this", "mode": "managed", "type": "aws_s3_bucket", "name": "this",
     "change": {"actions": ["delete", "create"], "before": {"bucket": "old", "tags": {"a": "1"}},
       "after": {"bucket": "new", "tags": {"a": "1"}}, "after_unknown": {"arn": true},
       "before_sensitive": {}, "after_sensitive": {}, "replace_paths": [["bucket"]]}},
    {"address": "module.main.random_password.p", "mode": "managed", "type": "random_password", "name": "p",
     "change": {"actions": ["update"], "before": {"result": "hunter2-old", "length": 12},
       "after": {"result": "hunter2-new", "length": 12},
       "before_sensitive": {"result": true}, "after_sensitive": {"result": true}}},
    {"address": "module.main.terraform_data.t", "mode": "managed", "type": "terraform_data", "name": "t",
     "change": {"actions": ["update"], "before": {"input": "old-token-1", "output": "old-token-1"},
       "after": {"input": "new-token-2"}, "after_unknown": {"output": true},
       "before_sensitive": {"input": true}, "after_sensitive": {"input": true}}},
    {"address": "module.main.aws_iam_user.u", "mode": "managed", "type": "aws_iam_user", "name": "u",
     "change": {"actions": ["no-op"], "before": {"name": "u"}, "after": {"name": "u"}, "importing": {"id": "u"}}},
    {"address": "module.main.data.aws_caller_identity.me", "mode": "data", "type": "aws_caller_identity", "name": "me",
     "change": {"actions": ["read"], "before": null, "after": {}}}
  ]
}`

func decodePlan(t *testing.T, raw string) *tfjson.Plan {
	t.Helper()
	var p tfjson.Plan
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

func TestDescribePlan(t *testing.T) {
	p := describePlan(decodePlan(t, replacementPlan), []byte("key"), nil)
	c := CountChanges(p.Changes)
	if c != (Counts{Change: 2, Replace: 1, Import: 1}) {
		t.Errorf("counts = %+v", c)
	}
	if got := c.String(); got != "+0 ~2 -0 -/+1 <=1" {
		t.Errorf("counts string = %q", got)
	}
	if d := p.Destructive(); len(d) != 1 || d[0].Address != "module.main.aws_s3_bucket.this" {
		t.Errorf("destructive = %v", d)
	}
	if p.Resources != 2 {
		t.Errorf("resources after apply = %d, want 2 (data sources are not counted)", p.Resources)
	}
	if len(p.ID) != 16 {
		t.Errorf("id %q is not 16 hex digits", p.ID)
	}
}

// TestPlanIDKeysSensitiveValues: the id follows a sensitive value (another value, another
// id) and the key (another key, another id), and never contains the value.
func TestPlanIDKeysSensitiveValues(t *testing.T) {
	base := planID(decodePlan(t, replacementPlan), []byte("key"), nil)
	if again := planID(decodePlan(t, replacementPlan), []byte("key"), nil); again != base {
		t.Errorf("same plan, same key: %s then %s", base, again)
	}
	other := planID(decodePlan(t, strings.Replace(replacementPlan, "hunter2-new", "hunter2-newer", 1)), []byte("key"), nil)
	if other == base {
		t.Error("a different sensitive value must give a different id")
	}
	if planID(decodePlan(t, replacementPlan), []byte("other-key"), nil) == base {
		t.Error("the key must enter the id")
	}
	masked := maskSensitive(map[string]any{"result": "hunter2-new", "length": 12.0}, map[string]any{"result": true}, []byte("key"))
	b, _ := json.Marshal(masked)
	if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), `"length":12`) {
		t.Errorf("masked value = %s", b)
	}
}

func TestRenderPlan(t *testing.T) {
	text := RenderPlan(decodePlan(t, replacementPlan))
	for _, want := range []string{
		"  # module.main.aws_s3_bucket.this must be replaced\n-/+ resource \"aws_s3_bucket\" \"this\" {\n",
		`      + arn    = (known after apply)`,
		`      ~ bucket = "old" -> "new" # forces replacement`,
		"        # (1 unchanged attribute hidden)",
		`      ~ result = (sensitive value) -> (sensitive value)`,
		"  # module.main.aws_iam_user.u will be imported",
		`      ~ output = (sensitive value) -> (known after apply)`,
		"Plan: 1 to add, 2 to change, 1 to destroy, 1 to import.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "hunter2") || strings.Contains(text, "token-") || strings.Contains(text, "caller_identity") {
		t.Errorf("plan text shows a sensitive value or a data source read:\n%s", text)
	}
}
