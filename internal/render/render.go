package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"terraplane.io/terraplane/internal/module"
)

// Names of the files a workspace holds.
const (
	// RootFile is the generated root module.
	RootFile = "main.tf.json"
	// VarsFile holds every input value but the providers' settings.
	VarsFile = "terraform.tfvars.json"
	// ProvidersFile holds the providers' settings, which the root module reads with
	// jsondecode(file(...)): unlike a variable, which terraform's validation of a plan
	// sees as unknown, a value read from a file is known there too, so both of the
	// provider's checks of its configuration in one command get the same question and a
	// warm provider answers the second from its cache (the aws provider takes seconds
	// for each).
	ProvidersFile = "terraplane-providers.json"
	// ModuleDir is where the called module is copied.
	ModuleDir = "module"
	// ModuleName is the name the root module calls the module by.
	ModuleName = "this"
)

// Provider is one Terraform provider the workspace configures.
type Provider struct {
	// Name is the provider's local name, e.g. "aws".
	Name string
	// Source is the provider's source address, e.g. "hashicorp/aws".
	Source string
	// Version is a version constraint, e.g. "5.100.0".
	Version string
	// Alias names an additional configuration of the same provider.
	Alias string
	// Config holds the provider block's attributes; nested blocks are maps or lists of maps.
	Config map[string]any
}

// Backend is where Terraform keeps the workspace's state.
type Backend struct {
	// Type of backend, e.g. "kubernetes"; empty means local state.
	Type string
	// Config holds the backend block's attributes. Only controller-chosen values belong here.
	Config map[string]any
}

// Input is everything one workspace is rendered from.
type Input struct {
	// Module is the module the root module calls.
	Module *module.Module
	// Values maps module variable names to values.
	Values map[string]any
	// Providers to configure.
	Providers []Provider
	// Backend for state.
	Backend Backend
	// Imports adopt existing objects into resources of the module.
	Imports []Import
	// SecretVariables are module variables whose values come from Secrets: declared
	// sensitive and passed to the module, their values are not in VarsFile (the engine
	// supplies them for each command only).
	SecretVariables []string
}

// Import names an existing object to adopt: Address is relative to the module.
type Import struct {
	// Address inside the module, e.g. aws_s3_bucket.this.
	Address string
	// ID is the provider's identifier of the object.
	ID string
}

// importsVar holds the import IDs, so that they too stay out of configuration text.
const importsVar = "terraplane_import_ids"

// Workspace is the rendered content of one workspace directory.
type Workspace struct {
	// Files maps a slash-separated path to its content; it includes VarsFile.
	Files map[string][]byte
}

// Render builds the workspace files for in. It never writes a block-type key with no
// blocks (Terraform's JSON syntax refuses `"variable": {}`), and it refuses what it
// cannot render as valid configuration with an error a user can act on.
func Render(in Input) (*Workspace, error) {
	if in.Module == nil {
		return nil, fmt.Errorf("render: no module")
	}
	values := withoutNulls(in.Values)
	supplied := maps.Clone(values)
	for _, name := range in.SecretVariables {
		delete(values, name)
		supplied[name] = true
	}
	if err := checkValues(in.Module, supplied); err != nil {
		return nil, err
	}
	if err := checkProviders(in.Providers); err != nil {
		return nil, err
	}
	in.Values = values
	vars := map[string]any{}
	for k, v := range values {
		vars[k] = v
	}
	variables := variableBlocks(in)
	root := map[string]any{"module": map[string]any{ModuleName: moduleCall(in)}}
	setBlocks(root, "terraform", terraformBlock(in))
	settings := map[string]any{}
	setBlocks(root, "provider", providerBlocks(in.Providers, settings))
	if len(settings) > 0 {
		root["locals"] = map[string]any{providersLocal: `${jsondecode(file("${path.module}/` + ProvidersFile + `"))}`}
	}
	setBlocks(root, "output", outputBlocks(in.Module))
	if len(in.Imports) > 0 {
		blocks, ids, err := importBlocks(in.Imports)
		if err != nil {
			return nil, err
		}
		root["import"] = blocks
		vars[importsVar] = ids
		variables[importsVar] = map[string]any{"sensitive": false}
	}
	setBlocks(root, "variable", variables)
	ws := &Workspace{Files: map[string][]byte{}}
	var err error
	if ws.Files[RootFile], err = encode(root); err != nil {
		return nil, err
	}
	if ws.Files[VarsFile], err = encode(vars); err != nil {
		return nil, err
	}
	if len(settings) > 0 {
		if ws.Files[ProvidersFile], err = encode(settings); err != nil {
			return nil, err
		}
	}
	for name, content := range in.Module.Tree() {
		if name != module.DirFile {
			ws.Files[ModuleDir+"/"+name] = content
		}
	}
	return ws, nil
}

// setBlocks adds a block type to root only when it holds at least one block.
func setBlocks(root map[string]any, blockType string, blocks map[string]any) {
	if len(blocks) > 0 {
		root[blockType] = blocks
	}
}

// withoutNulls drops inputs whose value is null: as in Kubernetes, null means "not set",
// so the module's default applies (passing null on would override it).
func withoutNulls(values map[string]any) map[string]any {
	out := make(map[string]any, len(values))
	for k, v := range values {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

// checkProviders refuses provider settings whose top-level names cannot be attribute or
// block names of a provider block.
func checkProviders(providers []Provider) error {
	for _, p := range providers {
		if !hclsyntax.ValidIdentifier(p.Name) {
			return fmt.Errorf("provider name %q is not a valid Terraform name", p.Name)
		}
		if p.Alias != "" && !hclsyntax.ValidIdentifier(p.Alias) {
			return fmt.Errorf("provider %s: alias %q is not a valid Terraform name", p.Name, p.Alias)
		}
		var bad []string
		for k := range p.Config {
			if !hclsyntax.ValidIdentifier(k) {
				bad = append(bad, strconv.Quote(k))
			}
		}
		if len(bad) > 0 {
			sort.Strings(bad)
			return fmt.Errorf("provider %s: setting %s is not a valid Terraform argument name", p.Name, strings.Join(bad, ", "))
		}
	}
	return nil
}

// checkValues refuses values for variables the module lacks and missing required ones.
func checkValues(m *module.Module, values map[string]any) error {
	var unknown, missing []string
	for k := range values {
		if _, ok := m.Variable(k); !ok {
			unknown = append(unknown, k)
		}
	}
	for _, v := range m.Variables {
		if _, ok := values[v.Name]; v.Required && (!ok || values[v.Name] == nil) {
			missing = append(missing, v.Name)
		}
	}
	sort.Strings(unknown)
	sort.Strings(missing)
	switch {
	case len(unknown) > 0:
		return fmt.Errorf("module has no variable %s (it has %s)", strings.Join(unknown, ", "), variableNames(m))
	case len(missing) > 0:
		return fmt.Errorf("module requires variable %s", strings.Join(missing, ", "))
	}
	return nil
}

func variableNames(m *module.Module) string {
	names := make([]string, 0, len(m.Variables))
	for _, v := range m.Variables {
		names = append(names, v.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func terraformBlock(in Input) map[string]any {
	tf := map[string]any{}
	required := map[string]any{}
	for _, p := range in.Providers {
		req := map[string]any{"source": p.Source}
		if p.Version != "" {
			req["version"] = p.Version
		}
		required[p.Name] = req
	}
	if len(required) > 0 {
		tf["required_providers"] = required
	}
	if in.Backend.Type != "" {
		tf["backend"] = map[string]any{in.Backend.Type: in.Backend.Config}
	}
	return tf
}

func variableBlocks(in Input) map[string]any {
	blocks := map[string]any{}
	for name := range in.Values {
		v, _ := in.Module.Variable(name)
		blocks[name] = map[string]any{"sensitive": v.Sensitive}
	}
	for _, name := range in.SecretVariables {
		blocks[name] = map[string]any{"sensitive": true}
	}
	return blocks
}

func moduleCall(in Input) map[string]any {
	call := map[string]any{"source": "./" + path.Join(ModuleDir, in.Module.Dir)} // a module that calls outside its directory sits in its source tree
	for name := range in.Values {
		call[name] = "${var." + name + "}"
	}
	for _, name := range in.SecretVariables {
		call[name] = "${var." + name + "}"
	}
	aliases := map[string]any{}
	for _, p := range in.Providers {
		if p.Alias != "" {
			aliases[p.Name+"."+p.Alias] = p.Name + "." + p.Alias
		}
	}
	if len(aliases) > 0 {
		for _, p := range in.Providers {
			if p.Alias == "" {
				aliases[p.Name] = p.Name
			}
		}
		call["providers"] = aliases
	}
	return call
}

// providersLocal is the local value that holds ProvidersFile's content.
const providersLocal = "terraplane_providers"

// providerBlocks writes one block per provider whose attributes reference the provider's
// settings in ProvidersFile, and puts the settings themselves into settings.
func providerBlocks(providers []Provider, settings map[string]any) map[string]any {
	blocks := map[string][]any{}
	for _, p := range providers {
		block := map[string]any{}
		if len(p.Config) > 0 {
			name := settingsKey(p)
			settings[name] = p.Config
			block = references("local."+providersLocal+"."+name, p.Config).(map[string]any)
		}
		if p.Alias != "" {
			block["alias"] = p.Alias
		}
		blocks[p.Name] = append(blocks[p.Name], block)
	}
	out := map[string]any{}
	for k, v := range blocks {
		out[k] = v
	}
	return out
}

// settingsKey is the key of p's settings in ProvidersFile.
func settingsKey(p Provider) string {
	if p.Alias != "" {
		return "terraplane_provider_" + p.Name + "_" + p.Alias
	}
	return "terraplane_provider_" + p.Name
}

// references mirrors value, replacing every leaf by an interpolation of its path under
// prefix. Nested object keys are data (a tag name, say): they are written escaped, so
// that `${` in a key stays literal, and reached by index when they are not identifiers.
func references(prefix string, value any) any {
	switch v := value.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, child := range v {
			out[escapeTemplate(k)] = references(attributePath(prefix, k), child)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, child := range v {
			out[i] = references(fmt.Sprintf("%s[%d]", prefix, i), child)
		}
		return out
	default:
		return "${" + prefix + "}"
	}
}

// attributePath extends a traversal by key: .key for identifiers, ["key"] otherwise.
func attributePath(prefix, key string) string {
	if hclsyntax.ValidIdentifier(key) {
		return prefix + "." + key
	}
	return prefix + "[" + escapeTemplate(quote(key)) + "]"
}

// quote writes s as a Terraform string literal.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// escapeTemplate makes s literal text in a Terraform template: ${ and %{ are doubled.
func escapeTemplate(s string) string {
	s = strings.ReplaceAll(s, "${", "$${")
	return strings.ReplaceAll(s, "%{", "%%{")
}

// importBlocks writes one import block per instruction; addresses are parsed as
// resource addresses and written back in canonical form, IDs are referenced from a
// variable.
func importBlocks(imports []Import) ([]any, []any, error) {
	blocks := make([]any, 0, len(imports))
	ids := make([]any, 0, len(imports))
	for i, im := range imports {
		addr, err := ResourceAddress(im.Address)
		if err != nil {
			return nil, nil, err
		}
		blocks = append(blocks, map[string]any{
			"to": "module." + ModuleName + "." + addr,
			"id": fmt.Sprintf("${var.%s[%d]}", importsVar, i),
		})
		ids = append(ids, im.ID)
	}
	return blocks, ids, nil
}

// ResourceAddress parses a managed resource address inside a module, such as
// aws_s3_bucket.this, random_string.s["a/b"] or module.net.aws_vpc.main[0], with
// Terraform's own traversal parser, and returns it in canonical form.
func ResourceAddress(address string) (string, error) {
	bad := fmt.Errorf("import address %q is not a resource address such as aws_s3_bucket.this or module.net.aws_vpc.main[\"a\"]", address)
	trav, diags := hclsyntax.ParseTraversalAbs([]byte(address), "", hcl.InitialPos)
	if diags.HasErrors() {
		return "", bad
	}
	type step struct {
		name  string
		index *cty.Value
	}
	var steps []step
	for _, t := range trav {
		switch t := t.(type) {
		case hcl.TraverseRoot:
			steps = append(steps, step{name: t.Name})
		case hcl.TraverseAttr:
			steps = append(steps, step{name: t.Name})
		case hcl.TraverseIndex:
			if steps[len(steps)-1].index != nil || steps[len(steps)-1].name == "module" {
				return "", bad
			}
			key := t.Key
			steps[len(steps)-1].index = &key
		default:
			return "", bad
		}
	}
	var out []string
	for len(steps) > 2 && steps[0].name == "module" && steps[0].index == nil {
		out = append(out, "module", steps[1].name+indexText(steps[1].index))
		steps = steps[2:]
	}
	if len(steps) != 2 || steps[0].index != nil || steps[0].name == "data" || steps[0].name == "module" {
		return "", bad
	}
	out = append(out, steps[0].name, steps[1].name+indexText(steps[1].index))
	return strings.Join(out, "."), nil
}

// indexText writes an instance key: [0] or ["key"].
func indexText(key *cty.Value) string {
	switch {
	case key == nil:
		return ""
	case key.Type() == cty.Number:
		return "[" + key.AsBigFloat().Text('f', -1) + "]"
	default:
		return "[" + quote(key.AsString()) + "]"
	}
}

func outputBlocks(m *module.Module) map[string]any {
	out := map[string]any{}
	for _, o := range m.Outputs {
		out[o.Name] = map[string]any{
			"value":     "${module." + ModuleName + "." + o.Name + "}",
			"sensitive": o.Sensitive,
		}
	}
	return out
}

func encode(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render: encode: %w", err)
	}
	return append(b, '\n'), nil
}
