package claimschema

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
)

// TestToCEL: each HCL construct of the clean subset becomes its CEL form on self; the
// rest is refused with a reason that names it.
func TestToCEL(t *testing.T) {
	ports := cty.List(cty.Object(map[string]cty.Type{"ports": cty.List(cty.Number), "min": cty.Number}))
	cases := map[string]struct {
		cond, rule, err string
		ty              cty.Type // of var.v; cty.NilType means any
	}{
		"parentheses":          {cond: `(var.v > 1)`, rule: `(self > 1)`},
		"arithmetic":           {cond: `var.v % 2 == 0 && var.v * 3 - 1 < 100 / 2 + 7`, rule: `self % 2 == 0 && self * 3 - 1 < 100 / 2 + 7`},
		"comparison chain":     {cond: `var.v >= 1 || var.v <= -1 || var.v != 0`, rule: `self >= 1 || self <= -1 || self != 0`},
		"negation":             {cond: `-var.v < 0`, rule: `-self < 0`},
		"not":                  {cond: `!var.v`, rule: `!self`},
		"conditional":          {cond: `var.v.public ? var.v.size > 1 : true`, rule: `self.public ? self.size > 1 : true`},
		"float literal":        {cond: `var.v < 0.5`, rule: `self < 0.5`},
		"string escapes":       {cond: `var.v != "a\"b"`, rule: `self != "a\"b"`},
		"endswith":             {cond: `endswith(var.v, ".io")`, rule: `self.endsWith(".io")`},
		"index by number":      {cond: `var.v[0] == "a"`, rule: `self[0] == "a"`},
		"index expression":     {cond: `var.v[var.v.key] != ""`, rule: `self[self.key] != ""`},
		"index then attribute": {cond: `var.v.items[0].name != ""`, rule: `self.items[0].name != ""`},
		"relative traversal":   {cond: `[var.v][0].x == 1`, rule: `[self][0].x == 1`},
		"anytrue":              {cond: `anytrue([for z in var.v : z == "a"])`, rule: `self.exists(z, z == "a")`, ty: cty.List(cty.String)},
		"a set":                {cond: `alltrue([for z in var.v : z > 0])`, rule: `self.all(z, z > 0)`, ty: cty.Set(cty.Number)},
		"nested quantifiers": {cond: `alltrue([for s in var.v : anytrue([for p in s.ports : p > s.min])])`,
			rule: `self.all(s, s.ports.exists(p, p > s.min))`, ty: ports},
		"a list in an object":     {cond: `alltrue([for z in var.v.zones : z != ""])`, rule: `self.zones.all(z, z != "")`, ty: cty.Object(map[string]cty.Type{"zones": cty.List(cty.String)})},
		"a map":                   {cond: `alltrue([for z in var.v : z != ""])`, err: "alltrue() translates only over a list or set; terraform iterates a map's or object's values, CEL its keys", ty: cty.Map(cty.String)},
		"a map in a list":         {cond: `alltrue([for s in var.v : anytrue([for p in s : p > 0])])`, err: "anytrue() translates only over a list or set; terraform iterates a map's or object's values, CEL its keys", ty: cty.List(cty.Map(cty.Number))},
		"of any type":             {cond: `alltrue([for z in var.v : z != ""])`, err: "alltrue() translates only over a list or set; terraform iterates a map's or object's values, CEL its keys"},
		"another variable":        {cond: `var.w > 1`, err: "a reference to another variable does not translate"},
		"a local":                 {cond: `local.max > var.v`, err: "reference to local does not translate"},
		"bare var":                {cond: `var == 1`, err: "reference to var does not translate"},
		"a splat":                 {cond: `length(var.v[*].name) > 0`, err: "a splat does not translate"},
		"a template":              {cond: `"${var.v}" != ""`, err: "string templates do not translate"},
		"a for with a key":        {cond: `alltrue([for k, s in var.v : s > 0])`, err: "alltrue() translates only around [for v in collection : condition]"},
		"a for with a condition":  {cond: `alltrue([for s in var.v : s > 0 if s != 1])`, err: "alltrue() translates only around [for v in collection : condition]"},
		"alltrue of a list":       {cond: `alltrue([var.v > 0])`, err: "alltrue() translates only around [for v in collection : condition]"},
		"a bare for":              {cond: `length([for s in var.v : s]) > 0`, err: "a for expression does not translate"},
		"an object":               {cond: `var.v == {a = 1}`, err: "an object constructor does not translate"},
		"wrong arity":             {cond: `length(var.v, 2) > 0`, err: "length() with 2 arguments does not translate"},
		"expanded arguments":      {cond: `contains(var.v...) == true`, err: "contains() with 1 arguments does not translate"},
		"can of another function": {cond: `can(regexall("a", var.v))`, err: "can(regexall()) does not translate"},
		"can of a two-arg other":  {cond: `can(cidrsubnet(var.v, 8))`, err: "can(cidrsubnet()) does not translate"},
		"null":                    {cond: `var.v == null`, err: "null does not translate"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expr, diags := hclsyntax.ParseExpression([]byte(tc.cond), "c.tf", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatalf("parse %s: %s", tc.cond, diags.Error())
			}
			ty := tc.ty
			if ty == cty.NilType {
				ty = cty.DynamicPseudoType
			}
			got, err := toCEL("v", ty, expr)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("toCEL(%s) = %q, %v; want the error %q", tc.cond, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.rule {
				t.Errorf("toCEL(%s) = %q, %v; want %q", tc.cond, got, err, tc.rule)
			}
		})
	}
}

// TestToCELFromJSON: a condition written in JSON syntax (a .tf.json module) is not
// translated, and says why.
func TestToCELFromJSON(t *testing.T) {
	f, diags := json.Parse([]byte(`{"c": "${length(var.v) > 0}"}`), "c.tf.json")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	attrs, _ := f.Body.JustAttributes()
	if _, err := toCEL("v", cty.String, attrs["c"].Expr); err == nil || err.Error() != "JSON syntax does not translate" {
		t.Errorf("toCEL of JSON syntax = %v", err)
	}
}
