package module

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"terraplane.io/terraplane/tfmodules"
)

func TestInspectHCLAndJSON(t *testing.T) {
	m, err := FromFiles(map[string][]byte{
		"variables.tf": []byte(`
variable "name" {
  type        = string
  description = "The name."
}
variable "size" {
  type    = number
  default = 10
}
variable "tags" {
  type    = map(string)
  default = { a = "b" }
}
variable "password" {
  type      = string
  sensitive = true
  default   = null
}
`),
		"outputs.tf.json":   []byte(`{"output": {"endpoint": {"value": "x"}, "secret": {"value": "y", "sensitive": true}}}`),
		"nested/ignored.tf": []byte(`variable "inner" {}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Variable{
		{Name: "name", Type: "string", Required: true, Description: "The name."},
		{Name: "password", Type: "string", Sensitive: true},
		{Name: "size", Type: "number", Default: json.RawMessage(`10`)},
		{Name: "tags", Type: "map(string)", Default: json.RawMessage(`{"a":"b"}`)},
	}
	if diff := cmp.Diff(want, m.Variables); diff != "" {
		t.Errorf("variables (-want +got):\n%s", diff)
	}
	wantOut := []Output{{Name: "endpoint"}, {Name: "secret", Sensitive: true}}
	if diff := cmp.Diff(wantOut, m.Outputs); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}

func TestInspectErrors(t *testing.T) {
	if _, err := FromFiles(map[string][]byte{"README.md": []byte("x")}); err == nil {
		t.Error("a directory without .tf files must be refused")
	}
	if _, err := FromFiles(map[string][]byte{"main.tf": []byte(`variable "x" {`)}); err == nil {
		t.Error("a syntax error must be reported")
	}
}

func TestBundledS3Module(t *testing.T) {
	m, err := Load(tfmodules.FS, "aws/s3bucket")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"bucket_name", "versioning", "encryption", "force_destroy", "tags", "create_access_key", "endpoint_url"} {
		if _, ok := m.Variable(v); !ok {
			t.Errorf("variable %s missing", v)
		}
	}
	for _, o := range []string{"endpoint", "bucket", "region"} {
		if _, ok := m.Output(o); !ok {
			t.Errorf("output %s missing", o)
		}
	}
	if o, _ := m.Output("secret_access_key"); !o.Sensitive {
		t.Error("secret_access_key must be sensitive")
	}
}

func TestLoadLeavesStateOut(t *testing.T) {
	fsys := fstest.MapFS{
		"main.tf":                           {Data: []byte(`variable "x" {}`)},
		"modules/vpc/main.tf":               {Data: []byte(`output "id" { value = 1 }`)},
		"terraform.tfstate":                 {Data: []byte(`{"secret": 1}`)},
		"terraform.tfstate.backup":          {Data: []byte(`{"secret": 1}`)},
		"terraform.tfstate.d/dev/x.tfstate": {Data: []byte(`{}`)},
		".terraform/providers/p":            {Data: []byte(`bin`)},
		".git/HEAD":                         {Data: []byte(`ref`)},
	}
	m, err := Load(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range m.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"main.tf", "modules/vpc/main.tf"}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestFromFilesLeavesStateOut(t *testing.T) {
	m, err := FromFiles(map[string][]byte{"main.tf": []byte(`variable "x" {}`), "sub/terraform.tfstate": []byte(`{}`), ".terraform/x": nil})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 1 {
		t.Errorf("want only main.tf, got %v", m.Files)
	}
}

func TestParseErrorsNameTheFile(t *testing.T) {
	_, err := FromFiles(map[string][]byte{"main.tf": []byte("variable \"x\" {\n"), "ok.tf": []byte(`output "y" { value = 1 }`)})
	if err == nil || !strings.Contains(err.Error(), "main.tf:1: Unclosed configuration block") {
		t.Fatalf("got %v, want the file and line of the problem", err)
	}
}

// TestLockIsNoModuleFile: a top-level dependency lock is the module's Lock, never one of
// its files; a lock below the top level is a file like any other; the bundled modules
// carry the lock make generate wrote.
func TestLockIsNoModuleFile(t *testing.T) {
	m, err := FromFiles(map[string][]byte{"main.tf": []byte(`variable "x" {}`), LockFile: []byte("# lock"), "sub/" + LockFile: []byte("# nested")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range m.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"main.tf", "sub/" + LockFile}, names); diff != "" || string(m.Lock) != "# lock" {
		t.Errorf("lock %q; files (-want +got):\n%s", m.Lock, diff)
	}
	if m, _ := FromFiles(map[string][]byte{"main.tf": []byte(`variable "x" {}`)}); m.Lock != nil {
		t.Errorf("a module without a lock has one: %q", m.Lock)
	}
	s3, err := Load(tfmodules.FS, "aws/s3bucket")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s3.Lock), `provider "registry.terraform.io/hashicorp/aws"`) {
		t.Errorf("the bundled S3 module's lock: %q", s3.Lock)
	}
}
