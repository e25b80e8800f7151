package module

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sgTree is shaped like terraform-aws-security-group: a top-level module, and submodules
// under modules/ that call it with ../../.
func sgTree() map[string][]byte {
	return map[string][]byte{
		"main.tf":                           []byte(`variable "name" {}` + "\n" + `module "rules" { source = "./modules/rules" }`),
		"modules/rules/main.tf":             []byte(`output "all" { value = {} }`),
		"modules/http-80/main.tf":           []byte(`variable "name" {}` + "\n" + `module "sg" { source = "../../" }`),
		"modules/http-80/outputs.tf":        []byte(`output "id" { value = "x" }`),
		"modules/escape/main.tf":            []byte(`module "up" { source = "../../../other" }`),
		"modules/standalone/main.tf":        []byte(`variable "x" {}`),
		"examples/complete/main.tf":         []byte(`module "sg" { source = "../../" }`),
		".git/config":                       []byte("never"),
		"modules/http-80/terraform.tfstate": []byte("never"),
	}
}

// TestFromTree: a submodule that calls ../../ keeps the whole source tree, rooted at its
// directory, and reads back from its Tree as the same module; a submodule that calls
// nothing outside keeps its own files only; a call that leaves the source is refused.
func TestFromTree(t *testing.T) {
	m, err := FromTree(sgTree(), "modules/http-80")
	if err != nil {
		t.Fatal(err)
	}
	if m.Dir != "modules/http-80" {
		t.Fatalf("Dir = %q", m.Dir)
	}
	if diff := cmp.Diff([]string{"main.tf", "outputs.tf"}, keys(m.Files)); diff != "" {
		t.Errorf("own files (-want +got):\n%s", diff)
	}
	if _, ok := m.Outside["main.tf"]; !ok {
		t.Errorf("the top-level module is not kept: %v", keys(m.Outside))
	}
	for name := range m.Outside {
		if !Kept(name) {
			t.Errorf("kept %s", name)
		}
	}
	if _, ok := m.Output("id"); !ok {
		t.Errorf("the interface is the submodule's: %+v", m.Outputs)
	}
	dirs, problems := m.LocalModules()
	if diff := cmp.Diff([]string{"modules/http-80", ".", "modules/rules"}, dirs); diff != "" || len(problems) > 0 {
		t.Errorf("LocalModules = %v, %v (-want +got dirs):\n%s", dirs, problems, diff)
	}
	back, err := FromFiles(m.Tree())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, back); diff != "" {
		t.Errorf("read back from its Tree (-want +got):\n%s", diff)
	}

	alone, err := FromTree(sgTree(), "modules/standalone")
	if err != nil || alone.Dir != "" || alone.Outside != nil || len(alone.Files) != 1 {
		t.Errorf("a submodule calling nothing outside: %+v, %v", alone, err)
	}

	escape, err := FromTree(sgTree(), "modules/escape")
	if err != nil {
		t.Fatal(err)
	}
	_, problems = escape.LocalModules()
	if diff := cmp.Diff([]string{"module up calls ../../../other, outside the module source's files"}, problems); diff != "" {
		t.Errorf("a call out of the source (-want +got):\n%s", diff)
	}
}

// keys lists a map's keys in order.
func keys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
