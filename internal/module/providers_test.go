package module

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequiredProviders(t *testing.T) {
	files := map[string][]byte{
		"versions.tf": []byte(`terraform {
  required_providers {
    aws    = { source = "hashicorp/aws", version = "~> 5.0" }
    custom = { source = "example.com/Team/Custom", version = ">= 1.2, < 2.0" }
  }
}`),
		"main.tf": []byte(`
resource "random_id" "i" { byte_length = 4 }
resource "terraform_data" "d" { input = 1 }
resource "aws_s3_bucket" "b" {}
`),
		"README.md": []byte("not terraform"),
	}
	got, err := RequiredProviders(files)
	if err != nil {
		t.Fatal(err)
	}
	want := []ProviderRequirement{
		{Name: "aws", Source: "registry.terraform.io/hashicorp/aws", Constraints: "~> 5.0"},
		{Name: "custom", Source: "example.com/team/custom", Constraints: ">= 1.2, < 2.0"},
		{Name: "random", Source: "registry.terraform.io/hashicorp/random"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("RequiredProviders (-want +got):\n%s", d)
	}
	if _, err := RequiredProviders(map[string][]byte{"main.tf": []byte("terraform {")}); err == nil {
		t.Error("unparsable HCL gave no error")
	}
}

func TestUnavailable(t *testing.T) {
	mirror := t.TempDir()
	for _, p := range []string{
		"registry.terraform.io/hashicorp/aws/5.100.0/linux_amd64/terraform-provider-aws_v5.100.0_x5",
		"registry.terraform.io/hashicorp/random/terraform-provider-random_3.9.0_linux_amd64.zip",
	} {
		full := filepath.Join(mirror, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/tf/example.com/team/custom/index.json" {
			_, _ = w.Write([]byte(`{"versions": {"1.4.0": {}, "2.1.0": {}}}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	reqs := []ProviderRequirement{
		{Source: "registry.terraform.io/hashicorp/aws", Constraints: "~> 5.0"},
		{Source: "registry.terraform.io/hashicorp/aws", Constraints: ">= 6.0"},
		{Source: "registry.terraform.io/hashicorp/random"},
		{Source: "example.com/team/custom", Constraints: ">= 1.2, < 2.0"},
		{Source: "registry.terraform.io/hashicorp/google"},
	}
	s := ProviderSources{Mirror: mirror, NetworkMirror: srv.URL + "/tf/"}
	got := s.Unavailable(context.Background(), reqs)
	want := []string{
		"provider registry.terraform.io/hashicorp/aws >= 6.0 is not in the provider mirror (it holds 5.100.0)",
		"provider registry.terraform.io/hashicorp/google is not in the provider mirror",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Unavailable (-want +got):\n%s", d)
	}
	if got := (ProviderSources{Direct: true}).Unavailable(context.Background(), reqs); got != nil {
		t.Errorf("with registry downloads nothing is unavailable, got %v", got)
	}
	down := ProviderSources{NetworkMirror: "http://127.0.0.1:1/"}
	if got := down.Unavailable(context.Background(), reqs[:1]); len(got) != 1 || !strings.Contains(got[0], "network mirror") {
		t.Errorf("an unreachable mirror: %v", got)
	}
}

// TestUnavailableWithOpenTofu checks that a tofu controller reads its mirror under
// registry.opentofu.org, where an image built for tofu holds the providers.
func TestUnavailableWithOpenTofu(t *testing.T) {
	mirror := t.TempDir()
	full := filepath.Join(mirror, "registry.opentofu.org/hashicorp/aws/5.100.0/linux_amd64/terraform-provider-aws_v5.100.0_x5")
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	reqs := []ProviderRequirement{{Name: "aws", Source: DefaultRegistry + "/hashicorp/aws", Constraints: "~> 5.0"}}
	if got := (ProviderSources{Mirror: mirror, Host: RegistryHost("/usr/local/bin/tofu")}).Unavailable(context.Background(), reqs); len(got) != 0 {
		t.Errorf("tofu: %v, want the provider available", got)
	}
	if got := (ProviderSources{Mirror: mirror, Host: RegistryHost("terraform")}).Unavailable(context.Background(), reqs); len(got) != 1 {
		t.Errorf("terraform: %v, want the provider missing (its registry's tree is empty)", got)
	}
}
