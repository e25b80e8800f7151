package module

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
)

// TestKept: state, its backups and terraform's and git's directories never belong to a
// module, wherever they are; everything else does.
func TestKept(t *testing.T) {
	for name, want := range map[string]bool{
		"main.tf":                       true,
		"modules/vpc/main.tf":           true,
		"modules/":                      true,
		"README.md":                     true,
		"tfstate.tf":                    true,
		"terraform.tfstate.json":        true,
		".gitignore":                    true,
		".terraform.lock.hcl":           true,
		"terraform.tfstate":             false,
		"sub/prod.tfstate":              false,
		"terraform.tfstate.backup":      false,
		".git/":                         false,
		".git/HEAD":                     false,
		"modules/vpc/.git/config":       false,
		".terraform/":                   false,
		"modules/x/.terraform/modules":  false,
		"terraform.tfstate.d/":          false,
		"terraform.tfstate.d/dev/a.txt": false,
	} {
		if got := Kept(name); got != want {
			t.Errorf("Kept(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRelative: a path below the module's directory, "" for the directory itself.
func TestRelative(t *testing.T) {
	for _, tc := range []struct{ dir, p, want string }{
		{".", ".", ""},
		{".", "main.tf", "main.tf"},
		{".", "modules/vpc/main.tf", "modules/vpc/main.tf"},
		{"aws/s3", "aws/s3", ""},
		{"aws/s3", "aws/s3/main.tf", "main.tf"},
		{"aws/s3", "aws/s3/modules/x.tf", "modules/x.tf"},
	} {
		if got := relative(tc.dir, tc.p); got != tc.want {
			t.Errorf("relative(%q, %q) = %q, want %q", tc.dir, tc.p, got, tc.want)
		}
	}
}

// TestDescribeDiagnostics: only errors are told, each with its file (without "./") and
// line when it has one, and its detail after the summary.
func TestDescribeDiagnostics(t *testing.T) {
	pos := func(f string, l int) *tfconfig.SourcePos { return &tfconfig.SourcePos{Filename: f, Line: l} }
	for name, tc := range map[string]struct {
		diags tfconfig.Diagnostics
		want  string
	}{
		"none":             {nil, ""},
		"a warning only":   {tfconfig.Diagnostics{{Severity: tfconfig.DiagWarning, Summary: "Deprecated"}}, ""},
		"summary only":     {tfconfig.Diagnostics{{Severity: tfconfig.DiagError, Summary: "Broken"}}, "Broken"},
		"with detail":      {tfconfig.Diagnostics{{Severity: tfconfig.DiagError, Summary: "Broken", Detail: "a brace"}}, "Broken: a brace"},
		"with its place":   {tfconfig.Diagnostics{{Severity: tfconfig.DiagError, Summary: "Broken", Pos: pos("./main.tf", 7)}}, "main.tf:7: Broken"},
		"nested file kept": {tfconfig.Diagnostics{{Severity: tfconfig.DiagError, Summary: "Broken", Pos: pos("sub/x.tf", 2)}}, "sub/x.tf:2: Broken"},
		"errors in order, warnings left out": {tfconfig.Diagnostics{
			{Severity: tfconfig.DiagError, Summary: "First", Detail: "d1", Pos: pos("./a.tf", 1)},
			{Severity: tfconfig.DiagWarning, Summary: "Noise"},
			{Severity: tfconfig.DiagError, Summary: "Second", Pos: pos("./b.tf", 9)},
		}, "a.tf:1: First: d1; b.tf:9: Second"},
	} {
		if diff := cmp.Diff(tc.want, describe(tc.diags)); diff != "" {
			t.Errorf("%s: describe (-want +got):\n%s", name, diff)
		}
	}
}

// TestModuleCallsAndLookups: module blocks are read sorted by name, and Variable and
// Output find what the module declares and nothing else.
func TestModuleCallsAndLookups(t *testing.T) {
	m, err := FromFiles(map[string][]byte{"main.tf": []byte(`
module "vpc" { source = "./modules/vpc" }
module "db" {
  source  = "terraform-aws-modules/rds/aws"
  version = "~> 6.0"
}
variable "name" { default = "x" }
output "id" { value = 1 }
`)})
	if err != nil {
		t.Fatal(err)
	}
	want := []Call{{Name: "db", Source: "terraform-aws-modules/rds/aws"}, {Name: "vpc", Source: "./modules/vpc"}}
	if diff := cmp.Diff(want, m.Calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name         string
		isVar, isOut bool
	}{{"name", true, false}, {"id", false, true}, {"missing", false, false}} {
		_, v := m.Variable(tc.name)
		_, o := m.Output(tc.name)
		if v != tc.isVar || o != tc.isOut {
			t.Errorf("%s: variable %v, output %v; want %v, %v", tc.name, v, o, tc.isVar, tc.isOut)
		}
	}
}
