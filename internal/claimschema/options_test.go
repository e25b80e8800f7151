package claimschema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// props decodes a JSON object of parameter schemas.
func props(t *testing.T, s string) map[string]apiextensionsv1.JSONSchemaProps {
	t.Helper()
	out := map[string]apiextensionsv1.JSONSchemaProps{}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return out
}

// TestStringsTakeWhatTerraformConverts: a string parameter has no type, so that a claim
// may write a number or a bool where terraform converts it (port: 5432), unless a
// validation rule the API server checks needs it typed; a set's items keep their type,
// which the API server requires. The API server accepts every schema made.
func TestStringsTakeWhatTerraformConverts(t *testing.T) {
	src := `
variable "port" { type = string }
variable "name" {
  type = string
  validation {
    condition     = length(var.name) <= 20
    error_message = "short."
  }
}
variable "versioning" {
  type    = map(string)
  default = {}
}
variable "zones" {
  type    = set(string)
  default = []
}`
	got, res := generate(t, src, Options{})
	types := map[string]any{}
	for name, p := range got["properties"].(map[string]any) {
		m := p.(map[string]any)
		switch {
		case m["additionalProperties"] != nil:
			types[name+"{}"] = m["additionalProperties"].(map[string]any)["type"]
		case m["items"] != nil:
			types[name+"[]"] = m["items"].(map[string]any)["type"]
		default:
			types[name] = m["type"]
		}
	}
	want := map[string]any{"port": nil, "name": "string", "versioning{}": nil, "zones[]": "string"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}
	if refused := refusedByAPIServer(t, res.Parameters); refused != "" {
		t.Errorf("the API server refuses the schema: %s", refused)
	}
}

// TestParameterSchemas: a definition's schema for one parameter replaces the generated
// one (keeping the variable's description when it has none); one for a sensitive or an
// unknown variable, or one the API server would not accept, is refused with the reason.
func TestParameterSchemas(t *testing.T) {
	src := `
variable "lifecycle_rule" {
  type        = any
  default     = []
  description = "Rules."
}
variable "password" {
  type      = string
  sensitive = true
}`
	typed := props(t, `{"lifecycle_rule": {"type": "array", "items": {"type": "object", "properties": {"days": {"type": "integer"}}}}}`)
	_, res := generate(t, src, Options{ParameterSchemas: typed})
	want := typed["lifecycle_rule"]
	want.Description = "Rules."
	if diff := cmp.Diff(want, res.Parameters.Properties["lifecycle_rule"]); diff != "" {
		t.Errorf("lifecycle_rule (-want +got):\n%s", diff)
	}
	if refused := refusedByAPIServer(t, res.Parameters); refused != "" {
		t.Errorf("the API server refuses the schema: %s", refused)
	}
	vars, err := ParseVariables(map[string][]byte{"main.tf": []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ schemas, want string }{
		"sensitive":      {`{"password": {"type": "string"}}`, "variable password is sensitive"},
		"unknown":        {`{"nope": {"type": "string"}}`, "the module has no variable nope"},
		"not structural": {`{"lifecycle_rule": {"type": "array", "items": {"properties": {"days": {"type": "integer"}}}}}`, "not a structural schema"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Generate(vars, Options{ParameterSchemas: props(t, tc.schemas)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestInferAnyFromDefaults: with the option, a variable of type any whose default is an
// object, or a list of objects, is typed from it (known fields, none required); an empty
// or scalar default, or the option off, leaves it open.
func TestInferAnyFromDefaults(t *testing.T) {
	src := `
variable "rule" {
  type    = any
  default = { days = 30, enabled = false, prefix = "logs/" }
}
variable "rules" {
  type    = any
  default = [{ days = 30 }, { id = "b", tags = { k = "v" } }]
}
variable "empty" {
  type    = any
  default = {}
}
variable "scalar" {
  type    = any
  default = 3
}`
	open := `{"x-kubernetes-preserve-unknown-fields":true}`
	str := `{"x-kubernetes-preserve-unknown-fields":true,"description":"a string (numbers and true/false are taken as terraform converts them)"}`
	for name, tc := range map[string]struct {
		infer bool
		want  string
	}{
		"off": {false, `{"rule":` + open + `,"rules":` + open + `,"empty":` + open + `,"scalar":` + open + `}`},
		"on": {true, `{
  "rule":{"type":"object","description":"typed from the module's default","properties":{"days":{"type":"number"},"enabled":{"type":"boolean"},"prefix":` + str + `}},
  "rules":{"type":"array","items":{"type":"object","description":"typed from the module's default","properties":{"days":{"type":"number"},"id":` + str + `,
    "tags":{"type":"object","description":"typed from the module's default","properties":{"k":` + str + `}}}}},
  "empty":` + open + `,"scalar":` + open + `}`},
	} {
		t.Run(name, func(t *testing.T) {
			_, res := generate(t, src, Options{InferAnyFromDefaults: tc.infer})
			got := map[string]any{}
			for n, p := range res.Parameters.Properties {
				p.Description = strings.TrimSuffix(strings.SplitN(p.Description, "default: ", 2)[0], "; ")
				raw, _ := json.Marshal(p)
				var m any
				_ = json.Unmarshal(raw, &m)
				got[n] = m
			}
			if diff := cmp.Diff(jsonOf(t, tc.want), got); diff != "" {
				t.Errorf("schemas (-want +got):\n%s", diff)
			}
			if refused := refusedByAPIServer(t, res.Parameters); refused != "" {
				t.Errorf("the API server refuses the schema: %s", refused)
			}
		})
	}
}

// TestFixedVariablesAreLeftOut: a variable the class fixes is no parameter, even when
// exposed or required.
func TestFixedVariablesAreLeftOut(t *testing.T) {
	src := `
variable "name" { type = string }
variable "attach_public_policy" {
  type    = bool
  default = true
}`
	_, res := generate(t, src, Options{Fixed: []string{"attach_public_policy", "name"}, Expose: []string{"attach_public_policy"}})
	if len(res.Parameters.Properties) != 0 || len(res.Parameters.Required) != 0 {
		t.Errorf("properties %v, required %v; want none", res.Parameters.Properties, res.Parameters.Required)
	}
}
