package claimschema

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// Variable is one module variable as written: what terraform-config-inspect leaves out
// (the type expression, the default as a value, validation blocks) included.
type Variable struct {
	// Name of the variable.
	Name string
	// Description as written.
	Description string
	// Type is the type expression; nil means any.
	Type hcl.Expression
	// TypeText is the type expression as written; empty means any.
	TypeText string
	// Default is the default value; HasDefault says whether there is one (it may be null).
	Default cty.Value
	// HasDefault is true when the variable declares a default.
	HasDefault bool
	// Sensitive variables never appear in a claim; a Secret reference stands for them.
	Sensitive bool
	// Validations are the variable's validation blocks.
	Validations []Validation
}

// Validation is one validation block.
type Validation struct {
	// Condition expression.
	Condition hcl.Expression
	// ConditionText is the condition as written.
	ConditionText string
	// ErrorMessage is the error_message when it is a literal string.
	ErrorMessage string
}

var fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "variable", LabelNames: []string{"name"}}}}

var variableBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "type"}, {Name: "default"}, {Name: "description"}, {Name: "sensitive"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "condition", Required: true}, {Name: "error_message"}}}

// ParseVariables reads the variable blocks of a module's top-level .tf and .tf.json
// files (slash-separated paths), sorted by name.
func ParseVariables(files map[string][]byte) ([]Variable, error) {
	p := hclparse.NewParser()
	var out []Variable
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.Contains(name, "/") {
			continue
		}
		var f *hcl.File
		var diags hcl.Diagnostics
		switch {
		case strings.HasSuffix(name, ".tf"):
			f, diags = p.ParseHCL(files[name], name)
		case strings.HasSuffix(name, ".tf.json"):
			f, diags = p.ParseJSON(files[name], name)
		default:
			continue
		}
		if diags.HasErrors() {
			return nil, fmt.Errorf("parse %s: %s", name, diags.Error())
		}
		vars, err := fileVariables(f, files[name])
		if err != nil {
			return nil, err
		}
		out = append(out, vars...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// fileVariables reads the variable blocks of one parsed file whose source is src.
func fileVariables(f *hcl.File, src []byte) ([]Variable, error) {
	content, _, diags := f.Body.PartialContent(fileSchema)
	if diags.HasErrors() {
		return nil, fmt.Errorf("read variables: %s", diags.Error())
	}
	var out []Variable
	for _, b := range content.Blocks {
		v, err := readVariable(b, src)
		if err != nil {
			return nil, fmt.Errorf("variable %q: %w", b.Labels[0], err)
		}
		out = append(out, v)
	}
	return out, nil
}

func readVariable(b *hcl.Block, src []byte) (Variable, error) {
	v := Variable{Name: b.Labels[0]}
	c, _, diags := b.Body.PartialContent(variableBlockSchema)
	if diags.HasErrors() {
		return v, fmt.Errorf("%s", diags.Error())
	}
	if a, ok := c.Attributes["type"]; ok {
		v.Type, v.TypeText = a.Expr, text(src, a.Expr.Range())
	}
	if a, ok := c.Attributes["default"]; ok {
		val, d := a.Expr.Value(nil)
		if d.HasErrors() {
			return v, fmt.Errorf("default: %s", d.Error())
		}
		v.Default, v.HasDefault = val, true
	}
	if a, ok := c.Attributes["description"]; ok {
		if val, d := a.Expr.Value(nil); !d.HasErrors() && val.Type() == cty.String && val.IsKnown() && !val.IsNull() {
			v.Description = val.AsString()
		}
	}
	if a, ok := c.Attributes["sensitive"]; ok {
		if val, d := a.Expr.Value(nil); !d.HasErrors() && val.Type() == cty.Bool && val.IsKnown() && !val.IsNull() {
			v.Sensitive = val.True()
		}
	}
	for _, vb := range c.Blocks {
		vc, d := vb.Body.Content(validationSchema)
		if d.HasErrors() {
			return v, fmt.Errorf("validation: %s", d.Error())
		}
		cond := vc.Attributes["condition"].Expr
		val := Validation{Condition: cond, ConditionText: text(src, cond.Range())}
		if a, ok := vc.Attributes["error_message"]; ok {
			if m, d := a.Expr.Value(nil); !d.HasErrors() && m.Type() == cty.String && m.IsKnown() && !m.IsNull() {
				val.ErrorMessage = m.AsString()
			}
		}
		v.Validations = append(v.Validations, val)
	}
	return v, nil
}

// text is the source text of r.
func text(src []byte, r hcl.Range) string {
	if r.Start.Byte < 0 || r.End.Byte > len(src) || r.Start.Byte > r.End.Byte {
		return ""
	}
	return string(src[r.Start.Byte:r.End.Byte])
}
