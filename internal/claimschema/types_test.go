package claimschema

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGenerateMoreTypes: maps of objects carry their attributes' defaults, sets of
// objects are plain arrays, and a default's null attributes are left out.
func TestGenerateMoreTypes(t *testing.T) {
	src := `
variable "pools" {
  type = map(object({
    size = optional(number, 1)
    zone = optional(string)
  }))
  default = { a = {} }
}
variable "rules" {
  type    = set(object({ port = number }))
  default = []
}`
	got, _ := generate(t, src, Options{})
	want := jsonOf(t, `{"type":"object","properties":{
  "pools":{"type":"object","description":"default: {\"a\":{\"size\":1}}","additionalProperties":{"type":"object","properties":{
    "size":{"type":"number"},"zone":{"x-kubernetes-preserve-unknown-fields":true,"description":"a string (numbers and true/false are taken as terraform converts them)"}}}},
  "rules":{"type":"array","description":"default: []","items":{"type":"object","required":["port"],"properties":{"port":{"type":"number"}}}}}}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

// TestGenerateRefuses: both lists set, a type expression that is not one, and a default
// that does not fit the type are errors naming the variable.
func TestGenerateRefuses(t *testing.T) {
	cases := map[string]struct {
		src  string
		opts Options
		want string
	}{
		"expose and hide": {`variable "a" {}`, Options{Expose: []string{"a"}, Hide: []string{"a"}}, "set at most one of expose and hide"},
		"expose unknown":  {`variable "a" {}`, Options{Expose: []string{"a", "b", "c"}}, "the module has no variable b, c"},
		"bad type":        {`variable "a" { type = lisst(string) }`, Options{}, `variable "a": type lisst(string)`},
		"bad default":     {`variable "a" {` + "\n type = number\n default = \"many\"\n}", Options{}, `variable "a": default`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vars, err := ParseVariables(map[string][]byte{"main.tf": []byte(tc.src)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Generate(vars, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Generate = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
