package claimschema

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// TestParseVariables: the variables of a module's top-level .tf and .tf.json files,
// sorted by name, with their description, default, sensitivity and validations as
// written; other files and subdirectories are not read.
func TestParseVariables(t *testing.T) {
	files := map[string][]byte{
		"variables.tf": []byte(`
variable "zeta" {
  type        = list(string)
  description = "Last."
  default     = ["a"]
  sensitive   = false
}
variable "alpha" {
  validation {
    condition     = length(var.alpha) > 0
    error_message = "must not be empty."
  }
  validation {
    condition     = var.alpha != "x"
    error_message = "no ${"x"}"
  }
}
variable "secret" {
  type      = string
  sensitive = true
  default   = null
}
output "ignored" { value = 1 }
`),
		"more.tf.json":        []byte(`{"variable": {"middle": {"type": "number", "default": 2, "description": "From JSON."}}}`),
		"modules/sub/vars.tf": []byte(`variable "nested" {}`),
		"README.md":           []byte(`variable "doc" {}`),
	}
	vars, err := ParseVariables(files)
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Name, Description, Type string
		HasDefault, Null        bool
		Default                 string
		Sensitive               bool
		Conditions, Messages    []string
	}
	var got []summary
	for _, v := range vars {
		s := summary{Name: v.Name, Description: v.Description, Type: v.TypeText, HasDefault: v.HasDefault, Sensitive: v.Sensitive}
		if v.HasDefault {
			s.Null = v.Default.IsNull()
			if !s.Null {
				s.Default = v.Default.GoString()
			}
		}
		for _, val := range v.Validations {
			s.Conditions, s.Messages = append(s.Conditions, val.ConditionText), append(s.Messages, val.ErrorMessage)
		}
		got = append(got, s)
	}
	want := []summary{
		{Name: "alpha", Conditions: []string{"length(var.alpha) > 0", `var.alpha != "x"`}, Messages: []string{"must not be empty.", "no x"}},
		{Name: "middle", Description: "From JSON.", Type: `"number"`, HasDefault: true, Default: cty.NumberIntVal(2).GoString()},
		{Name: "secret", Type: "string", HasDefault: true, Null: true, Sensitive: true},
		{Name: "zeta", Description: "Last.", Type: "list(string)", HasDefault: true, Default: cty.TupleVal([]cty.Value{cty.StringVal("a")}).GoString()},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("variables (-want +got):\n%s", diff)
	}
}

// TestParseVariablesRefuses: unparsable files, a default that needs evaluation and a
// validation without a condition are errors naming what is wrong.
func TestParseVariablesRefuses(t *testing.T) {
	cases := map[string]struct {
		file, src, want string
	}{
		"bad hcl":                        {"main.tf", `variable "v" {`, "parse main.tf"},
		"bad json":                       {"main.tf.json", `{"variable": `, "parse main.tf.json"},
		"a default with a reference":     {"main.tf", `variable "v" { default = local.x }`, `variable "v": default`},
		"a validation without condition": {"main.tf", "variable \"v\" {\n validation {\n error_message = \"x\"\n }\n}\n", `variable "v": validation`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseVariables(map[string][]byte{tc.file: []byte(tc.src)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseVariables = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestGenerateMessages: a rule without a literal error_message says which condition
// failed; a sensitive variable's reference carries its description.
func TestGenerateMessages(t *testing.T) {
	src := `
variable "v" {
  type = string
  validation {
    condition     = length(var.v) <  10
    error_message = "${var.v} is too long"
  }
}
variable "pw" {
  type        = string
  sensitive   = true
  description = "The admin password."
}`
	_, res := generate(t, src, Options{})
	rules := res.Parameters.Properties["v"].XValidations
	if len(rules) != 1 || rules[0].Message != "failed the module's validation: length(var.v) < 10" {
		t.Errorf("rules %+v, want one saying which condition failed", rules)
	}
	ref := res.Parameters.Properties["pwSecretRef"]
	if !strings.HasSuffix(ref.Description, ": The admin password.") || res.SecretRefs["pwSecretRef"] != "pw" {
		t.Errorf("secret ref %q, refs %v", ref.Description, res.SecretRefs)
	}
	if _, ok := res.Parameters.Properties["pw"]; ok {
		t.Error("a sensitive variable is a parameter")
	}
}
