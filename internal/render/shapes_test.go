package render

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"terraplane.io/terraplane/internal/module"
)

// rootSchema is the part of Terraform's root module schema a rendered workspace uses.
var rootSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "terraform"},
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "provider", LabelNames: []string{"name"}},
	{Type: "module", LabelNames: []string{"name"}},
	{Type: "output", LabelNames: []string{"name"}},
	{Type: "import"},
	{Type: "locals"},
}}

// anyValue is a function of one argument that returns an unknown value: the stand-in for
// file and jsondecode, which read the workspace's files.
var anyValue = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "arg", Type: cty.DynamicPseudoType}},
	Type:   function.StaticReturnType(cty.DynamicPseudoType),
	Impl:   func([]cty.Value, cty.Type) (cty.Value, error) { return cty.DynamicVal, nil },
})

// checkRoot parses a rendered root module as Terraform does (JSON syntax, root block
// schema) and evaluates every attribute, so that a block-type key without blocks, a
// missing label or an unparsable template fails. It returns the blocks by type.
func checkRoot(root []byte) (map[string]int, hcl.Diagnostics) {
	file, diags := hcljson.Parse(root, RootFile)
	if diags.HasErrors() {
		return nil, diags
	}
	content, diags := file.Body.Content(rootSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.DynamicVal, "module": cty.DynamicVal, "local": cty.DynamicVal,
			"path": cty.ObjectVal(map[string]cty.Value{"module": cty.StringVal(".")})},
		Functions: map[string]function.Function{"file": anyValue, "jsondecode": anyValue},
	}
	counts := map[string]int{}
	for _, b := range content.Blocks {
		counts[b.Type]++
		attrs, d := b.Body.JustAttributes()
		if b.Type == "terraform" || b.Type == "provider" {
			continue // nested blocks (backend, required_providers, endpoints) are not attributes
		}
		diags = append(diags, d...)
		for _, a := range attrs {
			_, d := a.Expr.Value(ctx)
			diags = append(diags, d...)
		}
	}
	return counts, diags
}

func mustModule(t testing.TB, src string) *module.Module {
	t.Helper()
	m, err := module.FromFiles(map[string][]byte{"main.tf": []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// shapeCases are modules and inputs at the edges of what the CRDs admit; each renders a
// valid root module. TestRenderValidatesWithTerraform runs them through terraform too.
var shapeCases = map[string]struct {
	module string
	values map[string]any
	golden bool
}{
	"no-variables": {module: `
resource "terraform_data" "this" { input = "fixed" }
output "id" { value = terraform_data.this.output }
`, golden: true},
	"only-defaults": {module: `
variable "size" {
  type    = number
  default = 1
}
variable "tags" {
  type    = map(string)
  default = {}
}
resource "terraform_data" "this" { input = var.size }
output "size" { value = terraform_data.this.output }
`, golden: true},
	"no-outputs": {module: `
variable "name" { type = string }
resource "terraform_data" "this" { input = var.name }
`, values: map[string]any{"name": "n"}, golden: true},
	"empty-and-null-values": {module: `
variable "tags" {
  type    = map(string)
  default = { team = "a" }
}
variable "list" {
  type    = list(string)
  default = ["x"]
}
variable "note" {
  type    = string
  default = "kept"
}
resource "terraform_data" "this" { input = [var.tags, var.list, var.note] }
output "note" { value = var.note }
`, values: map[string]any{"tags": map[string]any{}, "list": []any{}, "note": nil}},
	"literal-templates-and-odd-keys": {module: `
variable "labels" { type = map(string) }
resource "terraform_data" "this" { input = var.labels }
output "labels" { value = var.labels }
`, values: map[string]any{"labels": map[string]any{"kubernetes.io/name": "${x}", "${y}": "%{ if true }z%{ endif }", "1st": ""}}},
}

func TestRenderShapes(t *testing.T) {
	for name, c := range shapeCases {
		t.Run(name, func(t *testing.T) {
			ws, err := Render(Input{Module: mustModule(t, c.module), Values: c.values})
			if err != nil {
				t.Fatal(err)
			}
			if _, diags := checkRoot(ws.Files[RootFile]); diags.HasErrors() {
				t.Fatalf("invalid root module: %s\n%s", diags.Error(), ws.Files[RootFile])
			}
			if strings.Contains(string(ws.Files[RootFile]), "{}") || strings.Contains(string(ws.Files[RootFile]), "[]") {
				t.Errorf("empty object or list in the root module:\n%s", ws.Files[RootFile])
			}
			if !c.golden {
				return
			}
			golden := filepath.Join("testdata", name, RootFile+".golden")
			if *update {
				_ = os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, ws.Files[RootFile], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(ws.Files[RootFile])); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderDropsNullInputs(t *testing.T) {
	ws, err := Render(Input{Module: mustModule(t, shapeCases["empty-and-null-values"].module), Values: shapeCases["empty-and-null-values"].values})
	if err != nil {
		t.Fatal(err)
	}
	var vars map[string]any
	if err := json.Unmarshal(ws.Files[VarsFile], &vars); err != nil {
		t.Fatal(err)
	}
	if _, ok := vars["note"]; ok {
		t.Errorf("a null input must be left out so the module's default applies: %v", vars)
	}
}

// TestRenderProviderSettings: nested keys that are not identifiers (tag names such as
// kubernetes.io/name) are reached by index and stay literal; top-level settings that
// cannot be argument names are refused.
func TestRenderProviderSettings(t *testing.T) {
	m := mustModule(t, `resource "terraform_data" "this" {}`)
	cfg := map[string]any{"region": "eu-west-1", "default_tags": []any{map[string]any{"tags": map[string]any{"kubernetes.io/name": "a", "${x}": "b"}}}}
	ws, err := Render(Input{Module: m, Providers: []Provider{{Name: "aws", Source: "hashicorp/aws", Config: cfg}}})
	if err != nil {
		t.Fatal(err)
	}
	root := string(ws.Files[RootFile])
	for _, want := range []string{`"${local.terraplane_providers.terraplane_provider_aws.default_tags[0].tags[\"kubernetes.io/name\"]}"`, `"$${x}": "${local.terraplane_providers.terraplane_provider_aws.default_tags[0].tags[\"$${x}\"]}"`} {
		if !strings.Contains(root, want) {
			t.Errorf("root module lacks %s:\n%s", want, root)
		}
	}
	if _, diags := checkRoot(ws.Files[RootFile]); diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	_, err = Render(Input{Module: m, Providers: []Provider{{Name: "aws", Source: "hashicorp/aws", Config: map[string]any{"bad key": 1}}}})
	if err == nil || !strings.Contains(err.Error(), `setting "bad key" is not a valid Terraform argument name`) {
		t.Errorf("got %v, want the bad setting named", err)
	}
}

// fuzzModule takes any values; fuzzSeeds are FuzzRender's seed corpus, which
// TestRenderValidatesWithTerraform also runs through terraform.
const fuzzModule = `
variable "a" { default = null }
variable "b" { default = "b" }
output "a" { value = var.a }
`

var fuzzSeeds = []struct{ values, config string }{
	{`{}`, `{}`},
	{`{"a": null, "b": {}}`, `{"region": "x"}`},
	{`{"a": {"${x}": [1, {"k.y": null}]}}`, `{"default_tags": [{"tags": {"kubernetes.io/n": "v"}}]}`},
	{`{"b": "%{ if true }x%{ endif }"}`, `{"endpoints": [{"s3": "http://127.0.0.1:1"}], "a-b": {"1": [[]]}}`},
	{`{"a": {"q\"uo\\te\n\u0001": "v"}, "b": []}`, `{"default_tags": [{"tags": {"q\"uo\\te\n\u0001": "v"}}]}`},
	{`{"c": 1}`, `{"bad key": 1}`},
}

// FuzzRender: whatever values a Module's free-form forProvider and a ProviderConfig's
// config admit, Render either refuses them with an error or renders a root module that
// parses as Terraform's JSON syntax with every template valid.
func FuzzRender(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed.values, seed.config)
	}
	m := mustModule(f, fuzzModule)
	f.Fuzz(func(t *testing.T, valuesJSON, configJSON string) {
		var values, cfg map[string]any
		if json.Unmarshal([]byte(valuesJSON), &values) != nil || json.Unmarshal([]byte(configJSON), &cfg) != nil {
			return
		}
		ws, err := Render(Input{Module: m, Values: values, Providers: []Provider{{Name: "p", Source: "example/p", Config: cfg}}})
		if err != nil {
			return // refused with a message: fine
		}
		if _, diags := checkRoot(ws.Files[RootFile]); diags.HasErrors() {
			t.Fatalf("invalid root module for values %s, config %s: %s\n%s", valuesJSON, configJSON, diags.Error(), ws.Files[RootFile])
		}
	})
}
