package module

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLocalModules: local calls are followed through the module's files, however deep;
// one whose directory is missing (a ConfigMap made with --from-file drops
// subdirectories) or lies outside the module is a problem naming the call.
func TestLocalModules(t *testing.T) {
	root := `module "vpc" { source = "./modules/vpc" }
module "remote" { source = "org/name/aws" }
`
	cases := map[string]struct {
		files        map[string]string
		dirs, issues []string
	}{
		"nested local modules": {
			files: map[string]string{"main.tf": root, "modules/vpc/main.tf": `module "subnet" { source = "../subnet" }`,
				"modules/subnet/main.tf": `resource "terraform_data" "x" {}`},
			dirs: []string{".", "modules/vpc", "modules/subnet"},
		},
		"a flat copy without the submodules": {
			files:  map[string]string{"main.tf": root},
			dirs:   []string{"."},
			issues: []string{"module vpc calls ./modules/vpc, which is not among the module's files"},
		},
		"a call outside the module": {
			files:  map[string]string{"main.tf": `module "up" { source = "../shared" }`},
			dirs:   []string{"."},
			issues: []string{"module up calls ../shared, outside the module's files"},
		},
		"a directory without configuration": {
			files:  map[string]string{"main.tf": root, "modules/vpc/README.md": "docs"},
			dirs:   []string{"."},
			issues: []string{"module vpc calls ./modules/vpc, which is not among the module's files"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files := map[string][]byte{}
			for n, c := range tc.files {
				files[n] = []byte(c)
			}
			m, err := FromFiles(files)
			if err != nil {
				t.Fatal(err)
			}
			dirs, issues := m.LocalModules()
			if diff := cmp.Diff(tc.dirs, dirs); diff != "" {
				t.Errorf("dirs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.issues, issues); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAllRequiredProviders: the providers a submodule requires count, once per source.
func TestAllRequiredProviders(t *testing.T) {
	m, err := FromFiles(map[string][]byte{
		"main.tf": []byte(`terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 5.0" }
  }
}
module "db" { source = "./modules/db" }
`),
		"modules/db/main.tf": []byte(`terraform {
  required_providers {
    aws    = { source = "hashicorp/aws", version = "< 6.0" }
    random = { source = "hashicorp/random" }
  }
}
`),
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.AllRequiredProviders()
	if err != nil {
		t.Fatal(err)
	}
	want := []ProviderRequirement{
		{Name: "aws", Source: "registry.terraform.io/hashicorp/aws", Constraints: ">= 5.0, < 6.0"},
		{Name: "random", Source: "registry.terraform.io/hashicorp/random"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
}
