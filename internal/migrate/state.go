package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-exec/tfexec"

	"terraplane.io/terraplane/internal/render"
)

// pullState reads the state of the Terraform working directory dir from whatever backend
// it uses, with `terraform state pull` run there as the user would run it (their
// environment and CLI configuration). A directory that has not been initialised for its
// backend is initialised first (`terraform init -input=false`).
func pullState(ctx context.Context, terraform, dir string, progress Progress) ([]byte, error) {
	tf, err := tfexec.NewTerraform(dir, terraform)
	if err != nil {
		return nil, err
	}
	state, err := tf.StatePull(ctx)
	if err != nil {
		progress("initialising %s for its backend (terraform init)", dir)
		if ierr := tf.Init(ctx); ierr != nil {
			return nil, fmt.Errorf("terraform init in %s: %w", dir, ierr)
		}
		if state, err = tf.StatePull(ctx); err != nil {
			return nil, fmt.Errorf("terraform state pull in %s: %w", dir, err)
		}
	}
	if strings.TrimSpace(state) == "" {
		return nil, fmt.Errorf("%s has no Terraform state (terraform state pull printed nothing): there is nothing to migrate", dir)
	}
	return []byte(state), nil
}

// stateAddresses lists what has to move under the root module's call: every resource of
// the root module (data sources too) and every instance of a root-level module call.
// Only these names are read from the state; terraform itself rewrites it.
func stateAddresses(state []byte) ([]string, error) {
	var s struct {
		Version   int `json:"version"`
		Resources []struct {
			Module string `json:"module"`
			Mode   string `json:"mode"`
			Type   string `json:"type"`
			Name   string `json:"name"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(state, &s); err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	if s.Version != 4 {
		return nil, fmt.Errorf("the state has format version %d; only version 4 (terraform >= 0.12) is supported", s.Version)
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range s.Resources {
		addr := r.Type + "." + r.Name
		if r.Mode == "data" {
			addr = "data." + addr
		}
		if r.Module != "" {
			addr = firstModuleInstance(r.Module)
		}
		if !seen[addr] {
			seen[addr] = true
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out, nil
}

// firstModuleInstance is the root-level module instance of a module path, e.g.
// module.vpc["a"] of module.vpc["a"].module.subnets, read with HCL's traversal parser so
// that any for_each key terraform writes is understood.
func firstModuleInstance(path string) string {
	trav, diags := hclsyntax.ParseTraversalAbs([]byte(path), "", hcl.InitialPos)
	if diags.HasErrors() || len(trav) < 2 || trav.RootName() != "module" {
		return path
	}
	end := trav[1].SourceRange().End.Byte
	if len(trav) > 2 {
		if _, indexed := trav[2].(hcl.TraverseIndex); indexed {
			end = trav[2].SourceRange().End.Byte
		}
	}
	return path[:end]
}

// moveUnderModule moves every root-level address of state under the call of the module
// that Terraplane's generated root module makes, with `terraform state mv` on a copy in a
// private directory that is removed afterwards (state holds secrets).
func moveUnderModule(ctx context.Context, terraform string, state []byte, progress Progress) ([]byte, error) {
	addrs, err := stateAddresses(state)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "terraplane-migrate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "terraform.tfstate")
	if err := os.WriteFile(file, state, 0o600); err != nil {
		return nil, err
	}
	tf, err := tfexec.NewTerraform(dir, terraform)
	if err != nil {
		return nil, err
	}
	progress("moving %d addresses under module.%s (terraform state mv)", len(addrs), render.ModuleName)
	for _, a := range addrs {
		to := "module." + render.ModuleName + "." + a
		if err := tf.StateMv(ctx, a, to, tfexec.Lock(false), tfexec.Backup(filepath.Join(dir, "backup"))); err != nil {
			return nil, fmt.Errorf("terraform state mv %s %s: %w", a, to, err)
		}
	}
	return os.ReadFile(file)
}
