package kinds

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/tfmodules"
)

// TestBundledModulesReferences does the part of terraform validate that needs no
// provider schema, for modules whose provider is not in the mirror (google, azurerm):
// every var., local., resource and data reference names something the module declares,
// and every resource and data source belongs to a provider it requires.
func TestBundledModulesReferences(t *testing.T) {
	for _, k := range NewRegistry(nil).TerraformKinds() {
		if k.Terraform.LoadModule != nil {
			continue
		}
		t.Run(k.Terraform.ModuleDir, func(t *testing.T) {
			m, err := module.Load(k.Terraform.Modules, k.Terraform.ModuleDir)
			if err != nil {
				t.Fatal(err)
			}
			reqs, err := module.RequiredProviders(m.Files)
			if err != nil {
				t.Fatal(err)
			}
			decl, bodies := declarations(t, k.Terraform.ModuleDir)
			for _, b := range bodies {
				checkReferences(t, b, decl, nil)
			}
			for addr := range decl {
				typ, _, ok := strings.Cut(strings.TrimPrefix(addr, "data."), ".")
				if !ok || strings.HasPrefix(addr, "var.") || strings.HasPrefix(addr, "local.") || strings.HasPrefix(typ, "terraform_") {
					continue
				}
				local, _, _ := strings.Cut(typ, "_") // terraform_* are terraform's own
				if !slices.ContainsFunc(reqs, func(p module.ProviderRequirement) bool { return p.Name == local }) {
					t.Errorf("%s belongs to provider %s, which %s does not require", addr, local, k.Terraform.ModuleDir)
				}
			}
		})
	}
}

// declarations are the addresses a module declares (var.x, local.x, type.name,
// data.type.name) and every body whose expressions are to be checked.
func declarations(t *testing.T, dir string) (map[string]bool, []*hclsyntax.Body) {
	t.Helper()
	decl := map[string]bool{}
	var bodies []*hclsyntax.Body
	entries, err := fs.ReadDir(tfmodules.FS, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tf") {
			continue
		}
		src, err := fs.ReadFile(tfmodules.FS, path.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		f, diags := hclsyntax.ParseConfig(src, e.Name(), hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", e.Name(), diags.Error())
		}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			switch b.Type {
			case "variable":
				decl["var."+b.Labels[0]] = true
				for _, v := range b.Body.Blocks { // validation; type is a type, not a reference
					bodies = append(bodies, v.Body)
				}
				continue
			case "locals":
				for name := range b.Body.Attributes {
					decl["local."+name] = true
				}
			case "resource":
				decl[b.Labels[0]+"."+b.Labels[1]] = true
			case "data":
				decl["data."+b.Labels[0]+"."+b.Labels[1]] = true
			}
			bodies = append(bodies, b.Body)
		}
	}
	return decl, bodies
}

// checkReferences reports every reference in body, and in its nested blocks, that
// names nothing declared; iterators are the dynamic blocks' iterator names in scope.
func checkReferences(t *testing.T, body *hclsyntax.Body, decl map[string]bool, iterators []string) {
	t.Helper()
	builtin := []string{"each", "count", "self", "path", "terraform", "module"}
	for name, attr := range body.Attributes {
		if name == "ignore_changes" || name == "when" { // attribute names and a keyword, not references
			continue
		}
		// Variables leaves out the symbols of for expressions: only free references remain.
		for _, tr := range hclsyntax.Variables(attr.Expr) {
			root := tr.RootName()
			if slices.Contains(builtin, root) || slices.Contains(iterators, root) {
				continue
			}
			parts := []string{root}
			for _, step := range tr[1:] {
				if a, ok := step.(hcl.TraverseAttr); ok && len(parts) < 3 {
					parts = append(parts, a.Name)
				}
			}
			n := 2
			if root == "data" {
				n = 3
			}
			if len(parts) < n || !decl[strings.Join(parts[:n], ".")] {
				t.Errorf("%s: reference %s names nothing the module declares", tr.SourceRange(), strings.Join(parts, "."))
			}
		}
	}
	for _, b := range body.Blocks {
		inner := iterators
		if b.Type == "dynamic" && len(b.Labels) == 1 {
			inner = append(slices.Clone(iterators), b.Labels[0])
		}
		checkReferences(t, b.Body, decl, inner)
	}
}
