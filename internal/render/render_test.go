package render

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"terraplane.io/terraplane/internal/module"
)

var update = flag.Bool("update", false, "rewrite golden files")

func testModule(t *testing.T) *module.Module {
	t.Helper()
	m, err := module.FromFiles(map[string][]byte{
		"main.tf": []byte(`
variable "name" { type = string }
variable "tags" {
  type    = map(string)
  default = {}
}
variable "password" {
  type      = string
  sensitive = true
  default   = null
}
resource "terraform_data" "this" { input = var.name }
output "id" { value = terraform_data.this.id }
output "secret" {
  value     = var.password
  sensitive = true
}
`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRenderGolden(t *testing.T) {
	ws, err := Render(Input{
		Module: testModule(t),
		Values: map[string]any{"name": "${file(\"/etc/passwd\")}", "tags": map[string]any{"team": "a"}},
		Providers: []Provider{{Name: "aws", Source: "hashicorp/aws", Version: "5.100.0", Config: map[string]any{
			"region":    "us-east-1",
			"endpoints": []any{map[string]any{"s3": "http://127.0.0.1:9000"}},
		}}},
		Backend: Backend{Type: "kubernetes", Config: map[string]any{"secret_suffix": "uid-1", "namespace": "ns"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{RootFile, VarsFile, ProvidersFile} {
		golden := filepath.Join("testdata", name+".golden")
		if *update {
			if err := os.WriteFile(golden, ws.Files[name], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(ws.Files[name])); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
		}
	}
	if strings.Contains(string(ws.Files[RootFile]), "passwd") || strings.Contains(string(ws.Files[RootFile]), "127.0.0.1") {
		t.Error("an input value or a provider setting was pasted into configuration")
	}
	if _, ok := ws.Files[ModuleDir+"/main.tf"]; !ok {
		t.Error("module files not copied under module/")
	}
}

func TestRenderRefusesBadValues(t *testing.T) {
	cases := map[string]struct {
		values map[string]any
		want   string
	}{
		"unknown variable": {map[string]any{"name": "x", "colour": "red"}, "module has no variable colour (it has name, password, tags)"},
		"missing required": {map[string]any{"tags": map[string]any{}}, "module requires variable name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Render(Input{Module: testModule(t), Values: tc.values})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"bucketName": "bucket_name", "accessKeyID": "access_key_id", "forceDestroy": "force_destroy",
		"s3UsePathStyle": "s3_use_path_style", "region": "region", "createAccessKey": "create_access_key",
		"subnetIDs": "subnet_ids", "vpcSecurityGroupIDs": "vpc_security_group_ids", "kmsKeyID": "kms_key_id",
		"vpcCIDR": "vpc_cidr", "installedCRDs": "installed_crds", "IDsByName": "ids_by_name", "HTTPServer": "http_server",
	} {
		if got := Snake(in); got != want {
			t.Errorf("Snake(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"bucket_name": "bucketName", "access_key_id": "accessKeyId", "arn": "arn"} {
		if got := Camel(in); got != want {
			t.Errorf("Camel(%q) = %q, want %q", in, got, want)
		}
	}
	got := SnakeKeys(map[string]any{"bucketName": "b", "tags": map[string]any{"costCenter": "1"}})
	want := map[string]any{"bucket_name": "b", "tags": map[string]any{"costCenter": "1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SnakeKeys (-want +got):\n%s", diff)
	}
}

func TestRenderImports(t *testing.T) {
	ws, err := Render(Input{Module: testModule(t), Values: map[string]any{"name": "x"},
		Imports: []Import{{Address: "terraform_data.this", ID: `${evil}"`}}})
	if err != nil {
		t.Fatal(err)
	}
	root := string(ws.Files[RootFile])
	if !strings.Contains(root, `"to": "module.this.terraform_data.this"`) || !strings.Contains(root, `"id": "${var.terraplane_import_ids[0]}"`) {
		t.Errorf("import block missing or wrong:\n%s", root)
	}
	if strings.Contains(root, "evil") || !strings.Contains(string(ws.Files[VarsFile]), `evil`) {
		t.Error("import IDs must travel in tfvars only")
	}
	_, err = Render(Input{Module: testModule(t), Values: map[string]any{"name": "x"},
		Imports: []Import{{Address: `terraform_data.this"} resource "x" "y" {`, ID: "1"}}})
	if err == nil {
		t.Error("an address that is not a resource address must be refused")
	}
}

func TestResourceAddress(t *testing.T) {
	for in, want := range map[string]string{
		"aws_s3_bucket.this":                    "aws_s3_bucket.this",
		`random_string.s["a/b c"]`:              `random_string.s["a/b c"]`,
		`random_string.s["kubernetes.io/x"]`:    `random_string.s["kubernetes.io/x"]`,
		"module.net.aws_vpc.main[0]":            "module.net.aws_vpc.main[0]",
		`module.a["x"].module.b.t.n["q\"uote"]`: `module.a["x"].module.b.t.n["q\"uote"]`,
	} {
		got, err := ResourceAddress(in)
		if err != nil || got != want {
			t.Errorf("ResourceAddress(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "aws_s3_bucket", "data.aws_s3_bucket.x", "module.net", "a.b.c", `a.b["x"]["y"]`, `terraform_data.this"} resource "x" "y" {`, "a.b[var.x]"} {
		if got, err := ResourceAddress(in); err == nil {
			t.Errorf("ResourceAddress(%s) = %q, want an error", in, got)
		}
	}
}

// TestRenderSecretVariables declares Secret-fed variables sensitive and passes them to the
// module, but keeps their values (even one also in Values) out of every rendered file.
func TestRenderSecretVariables(t *testing.T) {
	ws, err := Render(Input{Module: testModule(t), Values: map[string]any{"name": "x", "password": "in-values-by-mistake"},
		SecretVariables: []string{"password"}})
	if err != nil {
		t.Fatal(err)
	}
	root := string(ws.Files[RootFile])
	if !strings.Contains(root, `"password": "${var.password}"`) || !strings.Contains(root, `"password": {
      "sensitive": true`) {
		t.Errorf("password is not a sensitive variable passed to the module:\n%s", root)
	}
	if strings.Contains(string(ws.Files[VarsFile]), "password") {
		t.Errorf("a secret variable is in %s:\n%s", VarsFile, ws.Files[VarsFile])
	}
	if _, err := Render(Input{Module: testModule(t), SecretVariables: []string{"name"}}); err != nil {
		t.Errorf("a required variable supplied as a secret variable: %v", err)
	}
}

// TestRenderModuleInItsSourceTree: a module that keeps its source tree (it calls ../../)
// is copied with that tree, and the root module calls it at its directory inside.
func TestRenderModuleInItsSourceTree(t *testing.T) {
	m, err := module.FromTree(map[string][]byte{
		"main.tf":                 []byte(`variable "name" {}`),
		"modules/http-80/main.tf": []byte(`variable "name" {}` + "\n" + `module "sg" {` + "\n" + `  source = "../../"` + "\n" + `  name = var.name` + "\n}"),
	}, "modules/http-80")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := Render(Input{Module: m, Values: map[string]any{"name": "web"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ModuleDir + "/main.tf", ModuleDir + "/modules/http-80/main.tf"} {
		if _, ok := ws.Files[name]; !ok {
			t.Errorf("%s not in the workspace: %v", name, slices.Sorted(maps.Keys(ws.Files)))
		}
	}
	if _, ok := ws.Files[ModuleDir+"/"+module.DirFile]; ok {
		t.Errorf("the tree's marker was copied")
	}
	if !strings.Contains(string(ws.Files[RootFile]), `"source": "./module/modules/http-80"`) {
		t.Errorf("root module:\n%s", ws.Files[RootFile])
	}
}
