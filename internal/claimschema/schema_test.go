package claimschema

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// generate parses src as main.tf and generates the parameters schema, as JSON.
func generate(t *testing.T, src string, opts Options) (map[string]any, *Result) {
	t.Helper()
	vars, err := ParseVariables(map[string][]byte{"main.tf": []byte(src)})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	res, err := Generate(vars, opts)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	raw, err := json.Marshal(res.Parameters)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out, res
}

func jsonOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return out
}

func TestGenerateTypes(t *testing.T) {
	cases := map[string]struct {
		src  string
		want string
	}{
		"primitives, required and defaults": {
			src: `
variable "name" {
  type        = string
  description = "Name of the network."
}
variable "size" {
  type    = number
  default = 3
}
variable "public" {
  type    = bool
  default = false
}`,
			want: `{"type":"object","required":["name"],"properties":{
  "name":{"x-kubernetes-preserve-unknown-fields":true,"description":"Name of the network.; a string (numbers and true/false are taken as terraform converts them)"},
  "size":{"type":"number","description":"default: 3"},
  "public":{"type":"boolean","description":"default: false"}}}`,
		},
		"collections": {
			src: `
variable "tags" { type = map(string) }
variable "zones" {
  type    = list(string)
  default = []
}
variable "ports" {
  type    = set(number)
  default = null
}
variable "pair" { type = tuple([string, number]) }`,
			want: `{"type":"object","required":["pair","tags"],"properties":{
  "tags":{"type":"object","additionalProperties":{"x-kubernetes-preserve-unknown-fields":true,"description":"a string (numbers and true/false are taken as terraform converts them)"}},
  "zones":{"type":"array","items":{"x-kubernetes-preserve-unknown-fields":true,"description":"a string (numbers and true/false are taken as terraform converts them)"},"description":"default: []"},
  "ports":{"type":"array","items":{"type":"number"},"x-kubernetes-list-type":"set"},
  "pair":{"type":"array","description":"a tuple: tuple([string,number])","minItems":2,"maxItems":2,"items":{"x-kubernetes-preserve-unknown-fields":true}}}}`,
		},
		"objects with optional attributes: terraform applies their defaults": {
			src: `
variable "subnets" {
  type = list(object({
    name = string
    cidr = string
    public = optional(bool, false)
    zone = optional(string)
  }))
  default = [{ name = "a", cidr = "10.0.0.0/24" }]
}`,
			want: `{"type":"object","properties":{
  "subnets":{"type":"array","description":"default: [{\"cidr\":\"10.0.0.0/24\",\"name\":\"a\",\"public\":false}]","items":{"type":"object","required":["cidr","name"],"properties":{
    "name":{"x-kubernetes-preserve-unknown-fields":true,"description":"a string (numbers and true/false are taken as terraform converts them)"},
    "cidr":{"x-kubernetes-preserve-unknown-fields":true,"description":"a string (numbers and true/false are taken as terraform converts them)"},
    "public":{"type":"boolean"},
    "zone":{"x-kubernetes-preserve-unknown-fields":true,"description":"a string (numbers and true/false are taken as terraform converts them)"}}}}}}`,
		},
		"any and untyped": {
			src: `
variable "extra" { type = any }
variable "loose" { default = "x" }`,
			want: `{"type":"object","required":["extra"],"properties":{
  "extra":{"x-kubernetes-preserve-unknown-fields":true},
  "loose":{"x-kubernetes-preserve-unknown-fields":true,"description":"default: \"x\""}}}`,
		},
		"sensitive variables become Secret references": {
			src: `
variable "password" {
  type      = string
  sensitive = true
}`,
			want: `{"type":"object","properties":{
  "passwordSecretRef":{"type":"object","description":"Secret key (in the claim's namespace) holding sensitive variable password","required":["name","key"],
    "properties":{"name":{"type":"string","minLength":1,"description":"Name of the Secret."},"key":{"type":"string","minLength":1,"description":"Key in the Secret."}}}}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _ := generate(t, tc.src, Options{})
			if diff := cmp.Diff(jsonOf(t, tc.want), got); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenerateValidations(t *testing.T) {
	cases := map[string]struct {
		typ, condition, rule, untranslated string // typ defaults to string
	}{
		"length":        {condition: `length(var.v) <= 20`, rule: `size(self) <= 20`},
		"regex":         {condition: `can(regex("^[a-z][a-z0-9-]*$", var.v))`, rule: `self.matches("^[a-z][a-z0-9-]*$")`},
		"contains":      {condition: `contains(["dev", "prod"], var.v)`, rule: `self in ["dev", "prod"]`},
		"combined":      {condition: `length(var.v) > 0 && !startswith(var.v, "x")`, rule: `size(self) > 0 && !self.startsWith("x")`},
		"cidr":          {condition: `can(cidrhost(var.v, 0))`, rule: `isCIDR(self)`},
		"alltrue":       {typ: "list(string)", condition: `alltrue([for s in var.v : length(s) > 0])`, rule: `self.all(s, size(s) > 0)`},
		"attribute":     {typ: "object({size = number, name = string})", condition: `var.v.size >= 1 || var.v.name == "x"`, rule: `self.size >= 1 || self.name == "x"`},
		"other var":     {condition: `var.other != ""`, untranslated: "a reference to another variable does not translate"},
		"template":      {condition: `var.v != "${local.x}"`, untranslated: "string templates do not translate"},
		"function":      {condition: `lower(var.v) == var.v`, untranslated: "function lower() does not translate"},
		"null":          {condition: `var.v != null`, untranslated: "null does not translate"},
		"can otherwise": {condition: `can(tonumber(var.v))`, untranslated: "can() translates only around regex(pattern, value) or cidrhost(prefix, n)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			typ := tc.typ
			if typ == "" {
				typ = "string"
			}
			src := "variable \"v\" {\n  type = " + typ + "\n  validation {\n    condition = " + tc.condition + "\n    error_message = \"must be\\n good.\"\n  }\n}\n"
			_, res := generate(t, src, Options{})
			got := res.Parameters.Properties["v"].XValidations
			if tc.untranslated != "" {
				want := []Untranslated{{Variable: "v", Condition: tc.condition, Reason: tc.untranslated}}
				if diff := cmp.Diff(want, res.Untranslated); diff != "" || len(got) > 0 {
					t.Errorf("untranslated (-want +got):\n%s\nrules: %v", diff, got)
				}
				return
			}
			want := apiextensionsv1.ValidationRules{{Rule: tc.rule, Message: "must be good."}}
			if diff := cmp.Diff(want, got); diff != "" || len(res.Untranslated) > 0 {
				t.Errorf("rules (-want +got):\n%s\nuntranslated: %v", diff, res.Untranslated)
			}
		})
	}
}

func TestGenerateExposeHide(t *testing.T) {
	src := `
variable "a" { type = string }
variable "b" { type = string }
variable "c" {
  type    = string
  default = "c"
}`
	for name, tc := range map[string]struct {
		opts Options
		want []string
	}{
		"all":    {opts: Options{}, want: []string{"a", "b", "c"}},
		"expose": {opts: Options{Expose: []string{"a", "c"}}, want: []string{"a", "c"}},
		"hide":   {opts: Options{Hide: []string{"b"}}, want: []string{"a", "c"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, res := generate(t, src, tc.opts)
			var got []string
			for _, n := range []string{"a", "b", "c"} {
				if _, ok := res.Parameters.Properties[n]; ok {
					got = append(got, n)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("properties (-want +got):\n%s", diff)
			}
		})
	}
	vars, _ := ParseVariables(map[string][]byte{"main.tf": []byte(src)})
	if _, err := Generate(vars, Options{Hide: []string{"nope"}}); err == nil || err.Error() != "the module has no variable nope" {
		t.Errorf("hiding an unknown variable: got %v", err)
	}
}
