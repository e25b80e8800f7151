package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
)

// writeModule writes files (slash-separated paths) under a new directory.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// generateFor runs claim generate with args, with no cluster to reach, and returns its
// output, what it said on stderr and its error.
func generateFor(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cmd := claimCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"generate"}, args...))
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// TestClaimGenerateConsent: the generated ModuleClass consents to the namespaces
// --allow-namespace names, and to none without it.
func TestClaimGenerateConsent(t *testing.T) {
	dir := writeModule(t, map[string]string{"main.tf": `variable "name" { type = string }`})
	for _, allow := range [][]string{nil, {"team-a", "team-b"}} {
		o := &claimOptions{kind: "Network", group: "platform.example.org", plural: "networks", name: "network", namespace: "terraplane-system", allow: allow}
		m, err := module.Load(os.DirFS(dir), ".")
		if err != nil {
			t.Fatal(err)
		}
		g, err := o.generate(m, moduleSource{dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		switch class := g.class; {
		case allow == nil && class.AllowedNamespaces != nil:
			t.Errorf("without --allow-namespace the class consents to %v", class.AllowedNamespaces)
		case allow != nil && (class.AllowedNamespaces == nil || strings.Join(class.AllowedNamespaces.Names, ",") != "team-a,team-b"):
			t.Errorf("allowedNamespaces = %+v, want team-a, team-b", class.AllowedNamespaces)
		}
	}
}

func TestParseModuleSource(t *testing.T) {
	git := func(url, ref, path string) terraformv1.ModuleSource {
		return terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: url, Ref: ref, Path: path}}
	}
	cases := map[string]struct {
		arg        string
		want       moduleSource
		wantErrSub string
	}{
		"a directory": {arg: "./modules/vpc", want: moduleSource{dir: "./modules/vpc"}},
		"git:: with a path and a ref": {arg: "git::https://git.example.com/org/modules.git//vpc?ref=v1.2.0",
			want: moduleSource{remote: git("https://git.example.com/org/modules.git", "v1.2.0", "vpc"), name: "vpc"}},
		"https without git::": {arg: "https://git.example.com/org/vpc.git?ref=main",
			want: moduleSource{remote: git("https://git.example.com/org/vpc.git", "main", ""), name: "vpc"}},
		"scp-like": {arg: "git@github.com:org/modules.git//db/postgres?ref=0123456789abcdef0123456789abcdef01234567",
			want: moduleSource{remote: git("git@github.com:org/modules.git", "0123456789abcdef0123456789abcdef01234567", "db/postgres"), name: "postgres"}},
		"file":              {arg: "file:///srv/modules.git//net?ref=v1", want: moduleSource{remote: git("file:///srv/modules.git", "v1", "net"), name: "net"}},
		"git without a ref": {arg: "git::https://git.example.com/org/modules.git//vpc", wantErrSub: "names no ref: add ?ref=TAG"},
		"oci with a tag": {arg: "oci://registry.example.com/modules/db:v2",
			want: moduleSource{remote: terraformv1.ModuleSource{OCI: &terraformv1.OCISource{Ref: "registry.example.com/modules/db:v2"}}, name: "db"}},
		"oci with a port, a digest and a path": {arg: "oci://localhost:5000/mods@sha256:abc//net",
			want: moduleSource{remote: terraformv1.ModuleSource{OCI: &terraformv1.OCISource{Ref: "localhost:5000/mods@sha256:abc", Path: "net"}}, name: "net"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseModuleSource(tc.arg)
			if tc.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) {
					t.Errorf("err = %v, want one containing %q", err, tc.wantErrSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(moduleSource{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanProviders: every provider that takes configuration gets a ProviderConfig in
// providerConfigRefs, a stub unless --provider-config names an existing one; providers
// that need none (random) get nothing, and naming a provider the module lacks is an error.
func TestPlanProviders(t *testing.T) {
	m, err := module.FromFiles(map[string][]byte{
		"main.tf": []byte(`terraform {
  required_providers {
    aws    = { source = "hashicorp/aws", version = "~> 5.0" }
    random = { source = "hashicorp/random" }
  }
}
module "sub" { source = "./sub" }`),
		"sub/main.tf": []byte(`terraform {
  required_providers {
    kubernetes = { source = "hashicorp/kubernetes" }
  }
}`)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := planProviders(m, "admin", []string{"kubernetes=cluster-a"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]common.LocalReference{{Name: "aws"}, {Name: "cluster-a"}}, p.refs); diff != "" {
		t.Errorf("refs (-want +got):\n%s", diff)
	}
	if len(p.stubs) != 1 || p.stubs[0].Name != "aws" || p.stubs[0].Namespace != "admin" || p.stubs[0].Spec.Source != "hashicorp/aws" || p.stubs[0].Spec.Version != "~> 5.0" {
		t.Errorf("stubs = %+v, want one for hashicorp/aws", p.stubs)
	}
	if _, err := planProviders(m, "admin", []string{"google=g"}); err == nil || !strings.Contains(err.Error(), `no provider "google"`) {
		t.Errorf("naming a provider the module lacks: err = %v", err)
	}
}

// TestModuleConfigMap: a flat module of text files ships one key per file; a module with
// local modules ships its whole tree as module.tar.gz, which reads back whole.
func TestModuleConfigMap(t *testing.T) {
	flatModule := map[string][]byte{"main.tf": []byte(`resource "terraform_data" "x" {}`), "variables.tf": []byte(`variable "a" {}`)}
	cm, err := moduleConfigMap(&module.Module{Files: flatModule}, "net-module", "admin")
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != 2 || cm.BinaryData != nil || cm.Namespace != "admin" {
		t.Errorf("flat module: data %v, binaryData %v", cm.Data, cm.BinaryData)
	}
	tree := map[string][]byte{"main.tf": []byte(`module "vpc" { source = "./modules/vpc" }`), "modules/vpc/main.tf": []byte(`resource "terraform_data" "x" {}`)}
	cm, err = moduleConfigMap(&module.Module{Files: tree}, "net-module", "admin")
	if err != nil {
		t.Fatal(err)
	}
	files, err := modsource.ReadTarball(cm.BinaryData["module.tar.gz"])
	if err != nil || cm.Data != nil {
		t.Fatalf("tree: data %v, tarball %v", cm.Data, err)
	}
	if diff := cmp.Diff(tree, files); diff != "" {
		t.Errorf("the tarball holds (-want +got):\n%s", diff)
	}
}

// TestClaimGenerateNames: a kind Terraplane serves already is refused, naming the group
// and the way out; --allow-name-conflict generates it with a warning.
func TestClaimGenerateNames(t *testing.T) {
	dir := writeModule(t, map[string]string{"main.tf": `variable "name" { type = string }`})
	_, _, err := generateFor(t, dir, "--kind", "Database", "--group", "platform.example.org")
	if err == nil || !strings.Contains(err.Error(), "databases.database.postgresql.terraplane.io takes the same kind Database and plural databases") ||
		!strings.Contains(err.Error(), "--allow-name-conflict") {
		t.Errorf("err = %v", err)
	}
	out, stderr, err := generateFor(t, dir, "--kind", "Database", "--group", "platform.example.org", "--allow-name-conflict")
	if err != nil || !strings.Contains(stderr, "warning: ") || !strings.Contains(out, "kind: ClaimDefinition") {
		t.Errorf("with --allow-name-conflict: err %v, stderr %q", err, stderr)
	}
}
