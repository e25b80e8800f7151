package claimschema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBreakingChanges(t *testing.T) {
	old := `
variable "name" { type = string }
variable "size" {
  type    = number
  default = 1
}
variable "subnets" {
  type    = list(object({ name = string, cidr = string }))
  default = []
}
variable "tags" {
  type    = map(string)
  default = {}
}`
	cases := map[string]struct {
		src  string
		want []string
	}{
		"unchanged": {src: old},
		"new optional field and a new default": {src: old + `
variable "zone" {
  type    = string
  default = "a"
}`},
		"removed and retyped": {
			src: `
variable "name" { type = number }
variable "subnets" {
  type    = list(object({ name = string }))
  default = []
}
variable "tags" {
  type    = map(number)
  default = {}
}`,
			want: []string{"name retyped (string → number)", "size removed", "subnets[].cidr removed", "tags{} retyped (string → number)"},
		},
		"new required field": {src: old + `
variable "zone" { type = string }`, want: []string{"zone now required"}},
		"any accepts everything": {src: `
variable "name" { type = any }
variable "size" { type = any }
variable "subnets" { type = any }
variable "tags" { type = any }`, want: []string{"size now required", "subnets now required", "tags now required"}},
	}
	_, o := generate(t, old, Options{})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, n := generate(t, tc.src, Options{})
			var got []string
			for _, c := range BreakingChanges(o.Parameters, n.Parameters) {
				got = append(got, c.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAffects(t *testing.T) {
	params := map[string]any{"name": "a", "subnets": []any{map[string]any{"name": "x", "cidr": "10.0.0.0/24"}}, "tags": map[string]any{"k": "v"}}
	cases := map[string]struct {
		change Change
		want   bool
	}{
		"removed, set":              {Change{Path: []string{"name"}, Kind: Removed}, true},
		"removed, not set":          {Change{Path: []string{"size"}, Kind: Removed}, false},
		"nested in a list, set":     {Change{Path: []string{"subnets", AnyItem, "cidr"}, Kind: Retyped}, true},
		"nested in a list, not set": {Change{Path: []string{"subnets", AnyItem, "zone"}, Kind: Removed}, false},
		"map values":                {Change{Path: []string{"tags", AnyValue}, Kind: Retyped}, true},
		"now required, set":         {Change{Path: []string{"name"}, Kind: NowRequired}, false},
		"now required, missing":     {Change{Path: []string{"zone"}, Kind: NowRequired}, true},
		"now required, nested":      {Change{Path: []string{"subnets", AnyItem, "zone"}, Kind: NowRequired}, true},
		"now required, no parent":   {Change{Path: []string{"network", "zone"}, Kind: NowRequired}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.change.Affects(params); got != tc.want {
				t.Errorf("Affects = %v, want %v", got, tc.want)
			}
		})
	}
	if !(Change{Path: []string{"zone"}, Kind: NowRequired}).Affects(nil) {
		t.Error("a claim without parameters is broken by a newly required field")
	}
}
