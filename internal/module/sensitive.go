package module

import (
	"path"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// MarksBeyondSchemas reports whether terraform may mark a value of the module, or of a
// local module it calls, sensitive for a reason the providers' schemas do not give: a
// sensitive variable, a sensitive output of a module that another module reads, or the
// sensitive function. It also says so when that cannot be told: a module from
// elsewhere, or a file that does not parse.
func (m *Module) MarksBeyondSchemas() bool {
	tree, start := m.Files, "."
	if m.Dir != "" {
		tree, start = m.Tree(), m.Dir
	}
	return marksIn(tree, start, 0, map[string]bool{})
}

// markBlocks and markAttrs are the blocks and attributes MarksBeyondSchemas reads.
var (
	markBlocks = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "module", LabelNames: []string{"name"}},
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "output", LabelNames: []string{"name"}},
	}}
	markAttrs = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "source"}, {Name: "sensitive"}}}
)

// marksIn reports MarksBeyondSchemas for module dir of tree, called depth modules deep.
func marksIn(tree map[string][]byte, dir string, depth int, seen map[string]bool) bool {
	if seen[dir] {
		return false
	}
	seen[dir] = true
	parser := hclparse.NewParser()
	for name, content := range subtree(tree, dir) {
		var f *hcl.File
		var diags hcl.Diagnostics
		switch {
		case strings.Contains(name, "/"):
			continue
		case strings.HasSuffix(name, ".tf"):
			f, diags = parser.ParseHCL(content, name)
		case strings.HasSuffix(name, ".tf.json"):
			f, diags = parser.ParseJSON(content, name)
		default:
			continue
		}
		if diags.HasErrors() || strings.Contains(string(content), "sensitive(") {
			return true
		}
		body, _, diags := f.Body.PartialContent(markBlocks)
		if diags.HasErrors() {
			return true
		}
		for _, b := range body.Blocks {
			attrs, _, diags := b.Body.PartialContent(markAttrs)
			if diags.HasErrors() {
				return true
			}
			switch {
			case b.Type == "output" && depth < 2:
				// The root's outputs, and those of the module it calls, reach no resource.
			case b.Type == "module":
				target, ok := localTarget(tree, dir, attrs.Attributes["source"])
				if !ok || marksIn(tree, target, depth+1, seen) {
					return true
				}
			case attrs.Attributes["sensitive"] != nil:
				v, d := attrs.Attributes["sensitive"].Expr.Value(nil)
				if d.HasErrors() || !v.IsKnown() || v.IsNull() || !v.Type().Equals(cty.Bool) || v.True() {
					return true
				}
			}
		}
	}
	return false
}

// localTarget is the directory of tree a module call's source attribute names, when it
// is a local module with configuration inside tree.
func localTarget(tree map[string][]byte, dir string, source *hcl.Attribute) (string, bool) {
	if source == nil {
		return "", false
	}
	v, d := source.Expr.Value(nil)
	if d.HasErrors() || !v.IsKnown() || v.IsNull() || !v.Type().Equals(cty.String) || !IsLocalSource(v.AsString()) {
		return "", false
	}
	target := path.Clean(path.Join(dir, v.AsString()))
	if target == ".." || strings.HasPrefix(target, "../") || !hasConfig(tree, target) {
		return "", false
	}
	return target, true
}
