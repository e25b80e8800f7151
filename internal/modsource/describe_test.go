package modsource

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
)

// validated is the module TestValidate checks templates against: name and password are
// required, size has a default; endpoint and secret are outputs.
func validated(t *testing.T) *module.Module {
	t.Helper()
	m, err := module.FromFiles(map[string][]byte{"main.tf": []byte(`
variable "name" {
  type        = string
  description = "The name."
}
variable "password" {
  type      = string
  sensitive = true
}
variable "size" { default = 10 }
output "endpoint" { value = "x" }
output "secret" {
  value     = "y"
  sensitive = true
}
`)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDescribe: variables and outputs as ModuleClass status lists them, defaults as JSON
// text.
func TestDescribe(t *testing.T) {
	vars, outs := Describe(validated(t))
	wantVars := []terraformv1.ModuleVariable{
		{Name: "name", Type: "string", Required: true, Description: "The name."},
		{Name: "password", Type: "string", Required: true, Sensitive: true},
		{Name: "size", Default: "10"},
	}
	if diff := cmp.Diff(wantVars, vars); diff != "" {
		t.Errorf("variables (-want +got):\n%s", diff)
	}
	wantOuts := []terraformv1.ModuleOutput{{Name: "endpoint"}, {Name: "secret", Sensitive: true}}
	if diff := cmp.Diff(wantOuts, outs); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}

// TestValidate: a class template is checked against its module, every problem told at
// once, sorted.
func TestValidate(t *testing.T) {
	m := validated(t)
	fixed := func(v map[string]any) *apiextensionsv1.JSON {
		b, _ := json.Marshal(v)
		return &apiextensionsv1.JSON{Raw: b}
	}
	in := func(field, variable string) terraformv1.InputMapping {
		return terraformv1.InputMapping{FromFieldPath: field, ToVariable: variable}
	}
	from := func(names ...string) []terraformv1.VariableFrom {
		var out []terraformv1.VariableFrom
		for _, n := range names {
			out = append(out, terraformv1.VariableFrom{Name: n})
		}
		return out
	}
	conn := func(output string) []terraformv1.ConnectionMapping {
		return []terraformv1.ConnectionMapping{{FromOutput: output, ToKey: "k"}}
	}
	tmpl := func(f func(*terraformv1.ModuleClassSpecTemplate)) terraformv1.ModuleClassSpecTemplate {
		var t terraformv1.ModuleClassSpecTemplate
		f(&t)
		return t
	}
	for _, tc := range []struct {
		name       string
		tmpl       terraformv1.ModuleClassSpecTemplate
		fromClaims []string
		want       string
	}{
		{name: "fixed values and inputs supply the required",
			tmpl: tmpl(func(t *terraformv1.ModuleClassSpecTemplate) {
				t.ForProvider = fixed(map[string]any{"name": "db"})
				t.Inputs = []terraformv1.InputMapping{in("spec.password", "password")}
				t.Connection = conn("endpoint")
			})},
		{name: "variablesFrom supplies the required",
			tmpl: tmpl(func(t *terraformv1.ModuleClassSpecTemplate) { t.VariablesFrom = from("name", "password") })},
		{name: "claims supply the required", fromClaims: []string{"name", "password"}},
		{name: "nothing supplied",
			want: `required variable "name" is not supplied by forProvider, inputs or variablesFrom; required variable "password" is not supplied by forProvider, inputs or variablesFrom`},
		{name: "unknown names everywhere", fromClaims: []string{"name", "password"},
			tmpl: tmpl(func(t *terraformv1.ModuleClassSpecTemplate) {
				t.ForProvider = fixed(map[string]any{"colour": "red"})
				t.Inputs = []terraformv1.InputMapping{in("spec.zone", "zone")}
				t.VariablesFrom = from("token")
				t.Connection = conn("arn")
			}),
			want: `connection maps unknown output "arn"; forProvider sets unknown variable "colour"; input spec.zone maps to unknown variable "zone"; variablesFrom sets unknown variable "token"`},
		{name: "an input from a cluster label names the label", fromClaims: []string{"name", "password"},
			tmpl: tmpl(func(t *terraformv1.ModuleClassSpecTemplate) {
				t.Inputs = []terraformv1.InputMapping{{FromClusterLabel: "region", ToVariable: "region"}}
			}),
			want: `input from cluster label region maps to unknown variable "region"`},
		{name: "variablesFrom sets what forProvider sets", fromClaims: []string{"password"},
			tmpl: tmpl(func(t *terraformv1.ModuleClassSpecTemplate) {
				t.ForProvider = fixed(map[string]any{"name": "db"})
				t.VariablesFrom = from("name")
			}),
			want: `variable "name" is set by variablesFrom and by forProvider or inputs`},
		{name: "variablesFrom sets what an input sets", fromClaims: []string{"name"},
			tmpl: tmpl(func(t *terraformv1.ModuleClassSpecTemplate) {
				t.Inputs = []terraformv1.InputMapping{in("spec.password", "password")}
				t.VariablesFrom = from("password")
			}),
			want: `variable "password" is set by variablesFrom and by forProvider or inputs`},
		{name: "fixed values that are not an object",
			tmpl: tmpl(func(t *terraformv1.ModuleClassSpecTemplate) {
				t.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`[1]`)}
			}),
			want: "forProvider: decode values"},
	} {
		err := Validate(m, tc.tmpl, tc.fromClaims...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want no problem", tc.name, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
