package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	tfjson "github.com/hashicorp/terraform-json"
)

func main() {
	pkgDir := flag.String("package", "", "the unpacked npm package (holding .jsii and lib/)")
	provider := flag.String("provider", "", "the provider's source, e.g. hashicorp/google")
	out := flag.String("out", "", "the schema JSON to write")
	flag.Parse()
	if *pkgDir == "" || *provider == "" || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: jsiischema -package DIR -provider NS/TYPE -out FILE MODULE_DIR...")
		os.Exit(2)
	}
	if err := run(*pkgDir, *provider, *out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "jsiischema:", err)
		os.Exit(1)
	}
}

func run(pkgDir, provider, out string, moduleDirs []string) error {
	typeName := provider[strings.Index(provider, "/")+1:]
	resources, data, err := usedTypes(moduleDirs, typeName+"_")
	if err != nil {
		return err
	}
	schema, err := convert(pkgDir, typeName, resources, data)
	if err != nil {
		return err
	}
	doc := tfjson.ProviderSchemas{FormatVersion: "1.0", Schemas: map[string]*tfjson.ProviderSchema{"registry.terraform.io/" + provider: schema}}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// convert reads the assembly and the JavaScript of each type and builds the schema.
func convert(pkgDir, typeName string, resources, data []string) (*tfjson.ProviderSchema, error) {
	pkg := "@cdktf/provider-" + typeName
	namespaces := map[string]bool{"provider": true}
	for _, r := range resources {
		namespaces[resourceNamespace(typeName, r)] = true
	}
	for _, d := range data {
		namespaces[dataNamespace(d)] = true
	}
	types, err := readTypes(filepath.Join(pkgDir, ".jsii"), namespaces)
	if err != nil {
		return nil, fmt.Errorf("read the assembly: %w", err)
	}
	ps := &tfjson.ProviderSchema{ResourceSchemas: map[string]*tfjson.Schema{}, DataSourceSchemas: map[string]*tfjson.Schema{}}
	if ps.ConfigSchema, err = providerSchema(pkgDir, pkg, typeName, types); err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	var missing []string
	for _, list := range []struct {
		names []string
		ns    func(string) string
		into  map[string]*tfjson.Schema
	}{{resources, func(n string) string { return resourceNamespace(typeName, n) }, ps.ResourceSchemas}, {data, dataNamespace, ps.DataSourceSchemas}} {
		for _, name := range list.names {
			s, err := typeSchema(pkgDir, pkg, list.ns(name), types)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			missing = append(missing, markSensitive(name, s.Block)...)
			list.into[name] = s
		}
	}
	missing = append(missing, markSensitive(typeName, ps.ConfigSchema.Block)...)
	if len(missing) > 0 {
		return nil, fmt.Errorf("sensitive attributes not in the schema: %s", strings.Join(missing, ", "))
	}
	return ps, nil
}

// typeSchema converts the resource or data source of namespace ns.
func typeSchema(pkgDir, pkg, ns string, types map[string]*jsiiType) (*tfjson.Schema, error) {
	js, err := readJS(filepath.Join(pkgDir, "lib", kebab(ns)))
	if err != nil {
		return nil, err
	}
	class := pkg + "." + ns + "." + pascal(ns)
	c := &converter{pkg: pkg, types: types, js: js}
	b, err := c.block(types[class+"Config"], class, pascal(ns))
	if err != nil {
		return nil, err
	}
	return &tfjson.Schema{Version: 0, Block: b}, nil
}

// providerSchema converts the provider's configuration (every argument optional or
// required as the struct says; the provider has no computed attributes).
func providerSchema(pkgDir, pkg, typeName string, types map[string]*jsiiType) (*tfjson.Schema, error) {
	js, err := readJS(filepath.Join(pkgDir, "lib", "provider"))
	if err != nil {
		return nil, err
	}
	c := &converter{pkg: pkg, types: types, js: js}
	cls := pascal(typeName) + "Provider"
	b, err := c.argumentsBlock(types[pkg+".provider."+cls+"Config"], cls)
	if err != nil {
		return nil, err
	}
	delete(b.Attributes, "alias") // a meta-argument
	return &tfjson.Schema{Block: b}, nil
}

// argumentsBlock converts a struct of arguments alone (the provider's), with their names
// from the registry links.
func (c *converter) argumentsBlock(config *jsiiType, hclOwner string) (*tfjson.SchemaBlock, error) {
	if config == nil {
		return nil, fmt.Errorf("no struct for %s", hclOwner)
	}
	b := &tfjson.SchemaBlock{Attributes: map[string]*tfjson.SchemaAttribute{}, NestedBlocks: map[string]*tfjson.SchemaBlockType{}}
	for _, p := range config.Properties {
		name := linkName(p)
		if name == "" {
			if p.Name != "alias" {
				return nil, fmt.Errorf("%s.%s has no registry link", config.FQN, p.Name)
			}
			name = "alias"
		}
		shape := c.js.hcl[hclOwner][name]
		if elem, single, ok := c.structOf(p.Type); ok {
			nb, err := c.argumentsBlock(c.types[elem], short(elem))
			if err != nil {
				return nil, err
			}
			bt := &tfjson.SchemaBlockType{Block: nb, NestingMode: nesting(single, shape.Type == "set", shape.Type)}
			if single && bt.NestingMode != tfjson.SchemaNestingModeSingle {
				bt.MaxItems = 1
			}
			if !p.Optional {
				bt.MinItems = 1
			}
			b.NestedBlocks[name] = bt
			continue
		}
		t, err := c.ctyType(p.Type, shape.Type == "set")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		b.Attributes[name] = &tfjson.SchemaAttribute{AttributeType: t, Required: !p.Optional, Optional: p.Optional}
	}
	return b, nil
}

// usedTypes lists the resource and data source types with prefix in the modules' .tf files.
func usedTypes(dirs []string, prefix string) (resources, data []string, err error) {
	seen := map[string]bool{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*", "*.tf"))
		if err != nil {
			return nil, nil, err
		}
		more, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
		for _, f := range append(files, more...) {
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, nil, err
			}
			file, diags := hclsyntax.ParseConfig(src, f, hcl.InitialPos)
			if diags.HasErrors() {
				return nil, nil, diags
			}
			for _, blk := range file.Body.(*hclsyntax.Body).Blocks {
				if (blk.Type != "resource" && blk.Type != "data") || len(blk.Labels) == 0 || !strings.HasPrefix(blk.Labels[0], prefix) {
					continue
				}
				key := blk.Type + " " + blk.Labels[0]
				if seen[key] {
					continue
				}
				seen[key] = true
				if blk.Type == "resource" {
					resources = append(resources, blk.Labels[0])
				} else {
					data = append(data, blk.Labels[0])
				}
			}
		}
	}
	sort.Strings(resources)
	sort.Strings(data)
	return resources, data, nil
}

// resourceNamespace is the binding's submodule of a resource: sqlUser for google_sql_user.
func resourceNamespace(typeName, name string) string {
	return camel(strings.TrimPrefix(name, typeName+"_"))
}

// dataNamespace is the submodule of a data source: dataGoogleClientConfig.
func dataNamespace(name string) string { return camel("data_" + name) }

func camel(snake string) string {
	p := pascal(snake)
	return strings.ToLower(p[:1]) + p[1:]
}

func pascal(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	if b.Len() == 0 {
		return s
	}
	out := b.String()
	return strings.ToUpper(out[:1]) + out[1:]
}

// kebab is the directory of a namespace's JavaScript: sql-user for sqlUser.
func kebab(ns string) string {
	var b strings.Builder
	for i, r := range ns {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
