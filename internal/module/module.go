package module

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Variable is one input variable of a module.
type Variable struct {
	// Name of the variable.
	Name string `json:"name"`
	// Type is the type constraint as written, e.g. "map(string)"; empty means any.
	Type string `json:"type,omitempty"`
	// Default is the default value as JSON; nil means the variable is required.
	Default json.RawMessage `json:"default,omitempty"`
	// Required is true when the variable has no default.
	Required bool `json:"required"`
	// Sensitive marks variables whose values Terraform hides.
	Sensitive bool `json:"sensitive,omitempty"`
	// Description as written in the module.
	Description string `json:"description,omitempty"`
}

// Output is one output of a module.
type Output struct {
	// Name of the output.
	Name string `json:"name"`
	// Sensitive outputs go only to connection Secrets.
	Sensitive bool `json:"sensitive,omitempty"`
	// Description as written in the module.
	Description string `json:"description,omitempty"`
}

// Module is a Terraform module's files and interface.
type Module struct {
	// Files maps a slash-separated path inside the module to its content.
	Files map[string][]byte
	// Variables sorted by name.
	Variables []Variable
	// Outputs sorted by name.
	Outputs []Output
}

// Variable returns the variable called name.
func (m *Module) Variable(name string) (Variable, bool) {
	for _, v := range m.Variables {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

// Output returns the output called name.
func (m *Module) Output(name string) (Output, bool) {
	for _, o := range m.Outputs {
		if o.Name == name {
			return o, true
		}
	}
	return Output{}, false
}

var fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "output", LabelNames: []string{"name"}},
}}

var variableSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "type"}, {Name: "default"}, {Name: "sensitive"}, {Name: "description"},
}}

var outputSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "sensitive"}, {Name: "description"},
}}

// Load reads the module rooted at dir in fsys: every file below it, and the variables
// and outputs of its top-level .tf and .tf.json files.
func Load(fsys fs.FS, dir string) (*Module, error) {
	m := &Module{Files: map[string][]byte{}}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != dir && (n == ".git" || n == ".terraform") {
				return fs.SkipDir
			}
			return nil
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		if strings.HasPrefix(rel, ".terraform/") || strings.HasSuffix(rel, ".tfstate") {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		m.Files[rel] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read module %s: %w", dir, err)
	}
	if err := m.inspect(); err != nil {
		return nil, err
	}
	return m, nil
}

// FromFiles builds a Module from files already in memory.
func FromFiles(files map[string][]byte) (*Module, error) {
	m := &Module{Files: files}
	return m, m.inspect()
}

func (m *Module) inspect() error {
	parser := hclparse.NewParser()
	names := make([]string, 0, len(m.Files))
	for name := range m.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	found := false
	for _, name := range names {
		if strings.Contains(name, "/") {
			continue
		}
		var f *hcl.File
		var diags hcl.Diagnostics
		switch {
		case strings.HasSuffix(name, ".tf"):
			f, diags = parser.ParseHCL(m.Files[name], name)
		case strings.HasSuffix(name, ".tf.json"):
			f, diags = parser.ParseJSON(m.Files[name], name)
		default:
			continue
		}
		found = true
		if diags.HasErrors() {
			return fmt.Errorf("parse module: %s", diags.Error())
		}
		if err := m.readBlocks(f.Body, m.Files[name]); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("module has no .tf or .tf.json files")
	}
	sort.Slice(m.Variables, func(i, j int) bool { return m.Variables[i].Name < m.Variables[j].Name })
	sort.Slice(m.Outputs, func(i, j int) bool { return m.Outputs[i].Name < m.Outputs[j].Name })
	return nil
}

func (m *Module) readBlocks(body hcl.Body, src []byte) error {
	content, _, diags := body.PartialContent(fileSchema)
	if diags.HasErrors() {
		return fmt.Errorf("read module: %s", diags.Error())
	}
	for _, b := range content.Blocks {
		attrs, _, diags := b.Body.PartialContent(schemaFor(b.Type))
		if diags.HasErrors() {
			return fmt.Errorf("read %s %q: %s", b.Type, b.Labels[0], diags.Error())
		}
		switch b.Type {
		case "variable":
			v, err := readVariable(b.Labels[0], attrs.Attributes, src)
			if err != nil {
				return err
			}
			m.Variables = append(m.Variables, v)
		case "output":
			m.Outputs = append(m.Outputs, Output{
				Name:        b.Labels[0],
				Sensitive:   boolAttr(attrs.Attributes["sensitive"]),
				Description: stringAttr(attrs.Attributes["description"]),
			})
		}
	}
	return nil
}

func schemaFor(blockType string) *hcl.BodySchema {
	if blockType == "variable" {
		return variableSchema
	}
	return outputSchema
}

func readVariable(name string, attrs hcl.Attributes, src []byte) (Variable, error) {
	v := Variable{
		Name:        name,
		Sensitive:   boolAttr(attrs["sensitive"]),
		Description: stringAttr(attrs["description"]),
		Required:    true,
	}
	if t, ok := attrs["type"]; ok {
		v.Type = typeText(t, src)
	}
	if d, ok := attrs["default"]; ok {
		val, diags := d.Expr.Value(nil)
		if diags.HasErrors() {
			return v, fmt.Errorf("variable %q: default: %s", name, diags.Error())
		}
		v.Required = false
		if !val.IsNull() {
			raw, err := ctyjson.Marshal(val, val.Type())
			if err != nil {
				return v, fmt.Errorf("variable %q: default: %w", name, err)
			}
			v.Default = raw
		}
	}
	return v, nil
}

// typeText renders a type constraint as written: the source text in HCL files, the
// string value in JSON files.
func typeText(a *hcl.Attribute, src []byte) string {
	if v, diags := a.Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.String && !v.IsNull() {
		return v.AsString()
	}
	return strings.TrimSpace(string(a.Expr.Range().SliceBytes(src)))
}

func boolAttr(a *hcl.Attribute) bool {
	if a == nil {
		return false
	}
	v, diags := a.Expr.Value(nil)
	return !diags.HasErrors() && v.Type() == cty.Bool && v.True()
}

func stringAttr(a *hcl.Attribute) string {
	if a == nil {
		return ""
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.Type() != cty.String || v.IsNull() {
		return ""
	}
	return v.AsString()
}
