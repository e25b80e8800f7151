package render

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"terraplane.io/terraplane/internal/module"
)

// Names of the files a workspace holds.
const (
	// RootFile is the generated root module.
	RootFile = "main.tf.json"
	// VarsFile holds every input value.
	VarsFile = "terraform.tfvars.json"
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

var importAddress = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]*\.[a-zA-Z_][a-zA-Z0-9_-]*(\[[0-9]+\]|\["[a-zA-Z0-9_.-]*"\])?(\.[a-zA-Z_][a-zA-Z0-9_-]*\.[a-zA-Z_][a-zA-Z0-9_-]*(\[[0-9]+\]|\["[a-zA-Z0-9_.-]*"\])?)*$`)

// Workspace is the rendered content of one workspace directory.
type Workspace struct {
	// Files maps a slash-separated path to its content; it includes VarsFile.
	Files map[string][]byte
}

// Render builds the workspace files for in.
func Render(in Input) (*Workspace, error) {
	if in.Module == nil {
		return nil, fmt.Errorf("render: no module")
	}
	if err := checkValues(in.Module, in.Values); err != nil {
		return nil, err
	}
	vars := map[string]any{}
	for k, v := range in.Values {
		vars[k] = v
	}
	root := map[string]any{
		"terraform": terraformBlock(in),
		"variable":  variableBlocks(in),
		"module":    map[string]any{ModuleName: moduleCall(in)},
	}
	if providers := providerBlocks(in.Providers, vars); len(providers) > 0 {
		root["provider"] = providers
	}
	if outputs := outputBlocks(in.Module); len(outputs) > 0 {
		root["output"] = outputs
	}
	if len(in.Imports) > 0 {
		blocks, ids, err := importBlocks(in.Imports)
		if err != nil {
			return nil, err
		}
		root["import"] = blocks
		vars[importsVar] = ids
		root["variable"].(map[string]any)[importsVar] = map[string]any{}
	}
	ws := &Workspace{Files: map[string][]byte{}}
	var err error
	if ws.Files[RootFile], err = encode(root); err != nil {
		return nil, err
	}
	if ws.Files[VarsFile], err = encode(vars); err != nil {
		return nil, err
	}
	for name, content := range in.Module.Files {
		ws.Files[ModuleDir+"/"+name] = content
	}
	return ws, nil
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
	for _, p := range in.Providers {
		if len(p.Config) > 0 {
			blocks[providerVar(p)] = map[string]any{}
		}
	}
	return blocks
}

func moduleCall(in Input) map[string]any {
	call := map[string]any{"source": "./" + ModuleDir}
	for name := range in.Values {
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

// providerBlocks writes one block per provider whose attributes reference the
// provider's variable, and puts the values themselves into vars.
func providerBlocks(providers []Provider, vars map[string]any) map[string]any {
	blocks := map[string][]any{}
	for _, p := range providers {
		block := map[string]any{}
		if len(p.Config) > 0 {
			name := providerVar(p)
			vars[name] = p.Config
			block = references("var."+name, p.Config).(map[string]any)
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

func providerVar(p Provider) string {
	if p.Alias != "" {
		return "terraplane_provider_" + p.Name + "_" + p.Alias
	}
	return "terraplane_provider_" + p.Name
}

// references mirrors value, replacing every leaf by an interpolation of its path under prefix.
func references(prefix string, value any) any {
	switch v := value.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, child := range v {
			out[k] = references(prefix+"."+k, child)
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

// importBlocks writes one import block per instruction; addresses are checked to be plain
// resource addresses, IDs are referenced from a variable.
func importBlocks(imports []Import) ([]any, []any, error) {
	blocks := make([]any, 0, len(imports))
	ids := make([]any, 0, len(imports))
	for i, im := range imports {
		if !importAddress.MatchString(im.Address) {
			return nil, nil, fmt.Errorf("import address %q is not a resource address such as aws_s3_bucket.this", im.Address)
		}
		blocks = append(blocks, map[string]any{
			"to": "module." + ModuleName + "." + im.Address,
			"id": fmt.Sprintf("${var.%s[%d]}", importsVar, i),
		})
		ids = append(ids, im.ID)
	}
	return blocks, ids, nil
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
