package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"sigs.k8s.io/yaml"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// gitModuleRepo is a git repository holding, under modules/store, a module that calls a
// local submodule and requires hashicorp/aws, tagged v1.2.0.
func gitModuleRepo(t *testing.T) string {
	t.Helper()
	dir := writeModule(t, map[string]string{
		"README.md": "modules",
		"modules/store/main.tf": `terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 5.0" }
  }
}
variable "bucket" { type = string }
module "bucket" {
  source = "./modules/bucket"
  name   = var.bucket
}
output "id" { value = module.bucket.id }
`,
		"modules/store/modules/bucket/main.tf": `variable "name" { type = string }
resource "aws_s3_bucket" "this" { bucket = var.name }
output "id" { value = aws_s3_bucket.this.id }
`,
	})
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddGlob("."); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("modules", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateTag("v1.2.0", h, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestClaimGenerateFromGit: claim generate reads a module from a git source as terraform
// writes it (through the controller's loader, local submodules included), names that
// source in the ModuleClass and ships no ConfigMap, and still finds the provider.
func TestClaimGenerateFromGit(t *testing.T) {
	repo := gitModuleRepo(t)
	src := "git::file://" + filepath.ToSlash(repo) + "//modules/store?ref=v1.2.0"
	out, stderr, err := generateFor(t, src, "--kind", "Store", "--group", "storage.example.org", "-o", "yaml")
	if err != nil {
		t.Fatalf("generate: %v\n%s", err, stderr)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var class terraformv1.ModuleClass
	for _, item := range list.Items {
		kinds = append(kinds, item["kind"].(string))
		if item["kind"] == "ModuleClass" {
			b, _ := yaml.Marshal(item)
			if err := yaml.Unmarshal(b, &class); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := strings.Join(kinds, ","); got != "ProviderConfig,ModuleClass,ClaimDefinition" {
		t.Errorf("generated %s; want a ProviderConfig stub, the ModuleClass and the ClaimDefinition, no ConfigMap", got)
	}
	git := class.SpecTemplate.Source.Git
	if git == nil || git.URL != "file://"+filepath.ToSlash(repo) || git.Ref != "v1.2.0" || git.Path != "modules/store" {
		t.Errorf("ModuleClass source = %+v, want the git source as given", class.SpecTemplate.Source)
	}
	if class.Name != "store" || len(class.SpecTemplate.ProviderConfigRefs) != 1 || class.SpecTemplate.ProviderConfigRefs[0].Name != "aws" {
		t.Errorf("ModuleClass %s with providerConfigRefs %v, want store with aws", class.Name, class.SpecTemplate.ProviderConfigRefs)
	}
}
