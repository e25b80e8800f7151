package render

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"terraplane.io/terraplane/internal/engine"
)

// TestRenderValidatesWithTerraform runs the shape cases, the fuzz seed corpus and
// provider settings with odd nested keys through the real `terraform init` and
// `terraform validate`.
func TestRenderValidatesWithTerraform(t *testing.T) {
	ctx, tfPath := context.Background(), terraformPath(t)
	cases := map[string]Input{}
	for name, c := range shapeCases {
		cases[name] = Input{Module: mustModule(t, c.module), Values: c.values}
	}
	for i, seed := range fuzzSeeds {
		var values map[string]any
		if err := json.Unmarshal([]byte(seed.values), &values); err != nil {
			t.Fatal(err)
		}
		if _, err := Render(Input{Module: mustModule(t, fuzzModule), Values: values}); err == nil {
			cases["fuzz-seed-"+string(rune('a'+i))] = Input{Module: mustModule(t, fuzzModule), Values: values}
		}
	}
	cases["aws-provider-odd-tag-keys"] = Input{
		Module: mustModule(t, `resource "terraform_data" "this" {}`),
		Providers: []Provider{{Name: "aws", Source: "hashicorp/aws", Version: "5.100.0", Config: map[string]any{
			"region":       "eu-west-1",
			"endpoints":    []any{map[string]any{"s3": "http://127.0.0.1:1"}},
			"default_tags": []any{map[string]any{"tags": map[string]any{"kubernetes.io/name": "a", "${x}": "%{y}", "q\"uote\n": "b"}}},
		}}},
	}
	cases["import-for-each-keys"] = Input{
		Module: mustModule(t, `
resource "random_string" "s" {
  for_each = toset(["a/b c", "q\"uote"])
  length   = 4
}
`),
		Providers: []Provider{{Name: "random", Source: "hashicorp/random", Version: "3.9.0"}},
		Imports:   []Import{{Address: `random_string.s["a/b c"]`, ID: "abcd"}, {Address: `random_string.s["q\"uote"]`, ID: "efgh"}},
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			ws, out := validate(ctx, t, tfPath, in)
			if !out.Valid {
				var msgs []string
				for _, d := range out.Diagnostics {
					msgs = append(msgs, d.Summary+": "+d.Detail)
				}
				t.Fatalf("terraform validate: %s\n%s", strings.Join(msgs, "; "), ws.Files[RootFile])
			}
		})
	}
}

// TestProviderSettingsKnownToValidation: terraform's validation, the first of the two walks
// of every plan, sees the provider settings as the known values they are, so that both
// ask the provider the same question (a variable would be unknown there): a setting of the
// wrong type fails terraform validate, naming it.
func TestProviderSettingsKnownToValidation(t *testing.T) {
	ctx, tfPath := context.Background(), terraformPath(t)
	_, out := validate(ctx, t, tfPath, Input{
		Module: mustModule(t, `resource "aws_s3_bucket" "this" { bucket = "b" }`),
		Providers: []Provider{{Name: "aws", Source: "hashicorp/aws", Version: "5.100.0", Config: map[string]any{
			"region": "eu-west-1", "max_retries": "many",
		}}},
	})
	if out.Valid || len(out.Diagnostics) == 0 || !strings.Contains(out.Diagnostics[0].Detail, `"max_retries": a number is required`) {
		t.Fatalf("terraform validate: got %+v, want max_retries refused", out)
	}
}

// terraformPath is the terraform the tests run; it skips a test with -short.
func terraformPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs terraform")
	}
	path, err := engine.FindTerraform("")
	if err != nil {
		t.Fatalf("%v (`make tools` checks for terraform)", err)
	}
	return path
}

// validate renders in into a directory of its own and runs terraform init there, without
// the backend, then terraform validate.
func validate(ctx context.Context, t *testing.T, tfPath string, in Input) (*Workspace, *tfjson.ValidateOutput) {
	t.Helper()
	ws, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for file, content := range ws.Files {
		path := filepath.Join(dir, filepath.FromSlash(file))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tf, err := tfexec.NewTerraform(dir, tfPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := tf.SetEnv(terraformEnv(t)); err != nil {
		t.Fatal(err)
	}
	if err := tf.Init(ctx, tfexec.Backend(false)); err != nil {
		t.Fatalf("terraform init: %v\n%s", err, ws.Files[RootFile])
	}
	out, err := tf.Validate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ws, out
}

// terraformEnv points terraform at the tool cache's provider mirror.
func terraformEnv(t *testing.T) map[string]string {
	t.Helper()
	cache := os.Getenv("TERRAPLANE_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "terraplane")
	}
	mirror := filepath.Join(cache, "providers")
	if _, err := os.Stat(filepath.Join(mirror, "registry.terraform.io", "hashicorp", "aws")); err != nil {
		t.Fatalf("no aws provider in the mirror %s: run `make tools`", mirror)
	}
	cfg := filepath.Join(t.TempDir(), "terraform.tfrc")
	text := "provider_installation {\n  filesystem_mirror {\n    path = " + quote(mirror) + "\n  }\n}\n"
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"TF_CLI_CONFIG_FILE": cfg, "CHECKPOINT_DISABLE": "1"}
}
