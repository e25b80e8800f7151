package engine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"terraplane.io/terraplane/internal/plugins"
)

// TestInstalledProviders: the providers init installed, by address, each with its real
// executable; files that cannot run are left out.
func TestInstalledProviders(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	root := filepath.Join(dir, dataDir, "providers")
	writeFiles(t, root, map[string]string{
		"registry.terraform.io/hashicorp/random/3.6.0/linux_amd64/terraform-provider-random_v3.6.0_x5": "bin",
		"registry.terraform.io/hashicorp/null/3.2.0/linux_amd64/terraform-provider-null_v3.2.0_x5":     "bin",
		"registry.terraform.io/hashicorp/local/2.5.0/linux_amd64/terraform-provider-local_v2.5.0_x5":   "not executable",
		"registry.terraform.io/hashicorp/local/2.5.0/linux_amd64/README":                               "",
	})
	writeFiles(t, elsewhere, map[string]string{"terraform-provider-aws_v5.100.0_x5": "bin"})
	for _, p := range []string{
		filepath.Join(root, "registry.terraform.io/hashicorp/random/3.6.0/linux_amd64/terraform-provider-random_v3.6.0_x5"),
		filepath.Join(root, "registry.terraform.io/hashicorp/null/3.2.0/linux_amd64/terraform-provider-null_v3.2.0_x5"),
		filepath.Join(elsewhere, "terraform-provider-aws_v5.100.0_x5"),
	} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	linked := filepath.Join(root, "registry.terraform.io/hashicorp/aws/5.100.0/linux_amd64")
	if err := os.MkdirAll(linked, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "terraform-provider-aws_v5.100.0_x5"), filepath.Join(linked, "terraform-provider-aws_v5.100.0_x5")); err != nil {
		t.Fatal(err)
	}
	got, err := installedProviders(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []plugins.Provider{
		{Address: "registry.terraform.io/hashicorp/aws", Binary: filepath.Join(elsewhere, "terraform-provider-aws_v5.100.0_x5")},
		{Address: "registry.terraform.io/hashicorp/null", Binary: filepath.Join(root, "registry.terraform.io/hashicorp/null/3.2.0/linux_amd64/terraform-provider-null_v3.2.0_x5")},
		{Address: "registry.terraform.io/hashicorp/random", Binary: filepath.Join(root, "registry.terraform.io/hashicorp/random/3.6.0/linux_amd64/terraform-provider-random_v3.6.0_x5")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
	if none, err := installedProviders(t.TempDir()); err != nil || len(none) != 0 {
		t.Errorf("a workspace without providers: %v, %v", none, err)
	}
	if err := os.Remove(filepath.Join(elsewhere, "terraform-provider-aws_v5.100.0_x5")); err != nil {
		t.Fatal(err)
	}
	if _, err := installedProviders(dir); err == nil || !strings.Contains(err.Error(), "provider binary") {
		t.Errorf("a dangling link: %v, want an error naming the provider binary", err)
	}
}

// TestProviderValues: the input values that may configure a provider are those of the
// variables named, or all of them when any may; values that do not decode count whole.
func TestProviderValues(t *testing.T) {
	vars := []byte(`{"name":"a","region":"eu","p":{"x":1}}`)
	for _, tc := range []struct {
		name   string
		tfvars []byte
		names  []string
		all    bool
		want   string
	}{
		{"named", vars, []string{"region", "p"}, false, `{"p":{"x":1},"region":"eu"}`},
		{"none named", vars, nil, false, `{}`},
		{"a name without a value", vars, []string{"zone"}, false, `{}`},
		{"all", vars, []string{"region"}, true, string(vars)},
		{"no values", nil, []string{"region"}, false, ""},
		{"not JSON", []byte("region = eu"), []string{"region"}, false, "region = eu"},
	} {
		if got := string(providerValues(tc.tfvars, tc.names, tc.all)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestConfigFilesAndProviderBlocks: which files terraform reads as configuration, and
// which of them hold a provider block.
func TestConfigFilesAndProviderBlocks(t *testing.T) {
	for name, want := range map[string]bool{"main.tf": true, "x.tf.json": true, "README.md": false, "main.tf.bak": false, "tf": false} {
		if got := configFile(name); got != want {
			t.Errorf("configFile(%q) = %v, want %v", name, got, want)
		}
	}
	for text, want := range map[string]bool{
		`provider "aws" {}`:                        true,
		"  provider   \"aws\" {\n}":                true,
		`{"provider": {"aws": {}}}`:                true,
		`# provider "aws" would go here`:           false,
		`resource "x" "y" { provider = aws.west }`: false,
		`required_providers { aws = {} }`:          false,
	} {
		if got := providerBlock.MatchString(text); got != want {
			t.Errorf("providerBlock(%q) = %v, want %v", text, got, want)
		}
	}
	refs := variableRef.FindAllStringSubmatch(`${var.terraplane_provider_aws.region} var.a-b var.9x novar.x`, -1)
	var names []string
	for _, m := range refs {
		names = append(names, m[1])
	}
	if diff := cmp.Diff([]string{"terraplane_provider_aws", "a-b"}, names); diff != "" {
		t.Errorf("variable references (-want +got):\n%s", diff)
	}
}

// TestNamedTypes: the words of a workspace's files, but its input values, and of the
// modules init installed; nil (every type) once a workspace is marked for the full schema.
func TestNamedTypes(t *testing.T) {
	e := &Engine{opts: Options{WorkDir: t.TempDir()}}
	ws := Workspace{ID: "w", Files: map[string][]byte{"main.tf": []byte(`resource "aws_s3_bucket" "b" {}`),
		varsFile: []byte(`{"secret_word":"x"}`)}}
	writeFiles(t, e.Dir("w"), map[string]string{
		dataDir + "/modules/m/main.tf":        `data "google_project" "p" {}`,
		dataDir + "/modules/m/x.tf.json":      `{"resource": {"azurerm_group": {}}}`,
		dataDir + "/modules/m/README.md":      "kubernetes_namespace",
		dataDir + "/modules/modules.json":     `{"Modules": []}`,
		dataDir + "/providers/p/elsewhere.tf": "hidden_type",
	})
	got := e.namedTypes(ws)
	for _, w := range []string{"aws_s3_bucket", "google_project", "azurerm_group", "resource", "b"} {
		if !slices.Contains(got, w) {
			t.Errorf("%s missing from %v", w, got)
		}
	}
	for _, w := range []string{"secret_word", "kubernetes_namespace", "Modules", "hidden_type"} {
		if slices.Contains(got, w) {
			t.Errorf("%s is not a word of the configuration: %v", w, got)
		}
	}
	writeFiles(t, e.Dir("w"), map[string]string{fullSchemaFile: ""})
	if got := e.namedTypes(ws); got != nil {
		t.Errorf("a workspace marked for the full schema: %v, want nil", got)
	}
}

// TestDescribingAll: a verb that misses the schema of a type only the state holds runs
// once more with every type described, and the workspace stays marked; any other
// outcome is returned as it is.
func TestDescribingAll(t *testing.T) {
	missing := errors.New("Error: no schema available for aws_iam_user.old while reading state; this is a bug")
	for _, tc := range []struct {
		name   string
		marked bool
		errs   []error // what each call returns
		calls  int
		err    error
	}{
		{"success", false, []error{nil}, 1, nil},
		{"another failure", false, []error{os.ErrPermission}, 1, os.ErrPermission},
		{"a missing schema, then success", false, []error{missing, nil}, 2, nil},
		{"a missing schema twice", false, []error{missing, missing}, 2, missing},
		{"a missing schema, already marked", true, []error{missing, nil}, 1, missing},
	} {
		e := &Engine{opts: Options{WorkDir: t.TempDir()}}
		if err := os.MkdirAll(e.Dir("w"), 0o700); err != nil {
			t.Fatal(err)
		}
		if tc.marked {
			writeFiles(t, e.Dir("w"), map[string]string{fullSchemaFile: ""})
		}
		calls := 0
		v, err := describingAll(e, Workspace{ID: "w"}, func() (int, error) {
			calls++
			return calls, tc.errs[calls-1]
		})
		_, statErr := os.Stat(filepath.Join(e.Dir("w"), fullSchemaFile))
		wantMarked := tc.marked || tc.calls == 2
		if calls != tc.calls || v != calls || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) || (statErr == nil) != wantMarked {
			t.Errorf("%s: %d calls, value %d, error %v, marked %v; want %d calls, error %v, marked %v", tc.name, calls, v, err, statErr == nil, tc.calls, tc.err, wantMarked)
		}
	}
}
