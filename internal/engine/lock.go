package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/zclconf/go-cty/cty"
)

// ProviderChange is a provider whose version a plan moves away from the workspace's lock.
type ProviderChange struct {
	// Provider is the provider's address, e.g. registry.terraform.io/hashicorp/random.
	Provider string
	// From is the version the lock holds; To the version the plan was made with.
	From, To string
}

// String is the change as "hashicorp/random 3.9.0 -> 3.10.0".
func (c ProviderChange) String() string {
	return fmt.Sprintf("%s %s -> %s", shortProvider(c.Provider), c.From, c.To)
}

// shortProvider is addr without a public registry host (publicRegistries: the hosts a
// provider source without one means). OpenTofu reads a terraform lock's entries as its
// own, so a lock written by one binary fixes the versions of the other; versions are
// compared without these hosts.
func shortProvider(addr string) string {
	for _, h := range publicRegistries {
		if rest, ok := strings.CutPrefix(addr, h+"/"); ok {
			return rest
		}
	}
	return addr
}

// LockedVersions are the provider versions a dependency lock holds, each as
// "hashicorp/random 3.9.0", in file order; none for an unreadable lock.
func LockedVersions(lock []byte) []string {
	locked, err := lockedVersions(lock)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(locked))
	for _, p := range locked {
		out = append(out, shortProvider(p.Address)+" "+p.Version)
	}
	return out
}

// lockedProvider is one provider block of a dependency lock file.
type lockedProvider struct {
	Address, Version string
}

// lockedVersions reads the provider versions of a dependency lock file, in file order.
func lockedVersions(lock []byte) ([]lockedProvider, error) {
	file, diags := hclsyntax.ParseConfig(lock, lockFile, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("read dependency lock: %s", diags.Error())
	}
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok {
		return nil, fmt.Errorf("read dependency lock: unexpected syntax")
	}
	var out []lockedProvider
	for _, b := range body.Blocks {
		if b.Type != "provider" || len(b.Labels) != 1 {
			continue
		}
		p := lockedProvider{Address: b.Labels[0]}
		if attr, ok := b.Body.Attributes["version"]; ok {
			v, diags := attr.Expr.Value(nil)
			if diags.HasErrors() || !v.Type().Equals(cty.String) {
				return nil, fmt.Errorf("read dependency lock: provider %q: version is not a string", p.Address)
			}
			p.Version = v.AsString()
		}
		out = append(out, p)
	}
	return out, nil
}

// ProviderChanges lists the providers of the lock from whose version differs in the lock
// to. Providers only one of them holds are no change: a provider the module started to
// use is chosen at init, as without a lock. An unreadable lock counts as no change.
func ProviderChanges(from, to []byte) []ProviderChange {
	if from == nil || to == nil {
		return nil
	}
	before, err1 := lockedVersions(from)
	after, err2 := lockedVersions(to)
	if err1 != nil || err2 != nil {
		return nil
	}
	var out []ProviderChange
	for _, b := range before {
		i := slices.IndexFunc(after, func(a lockedProvider) bool { return shortProvider(a.Address) == shortProvider(b.Address) })
		if i >= 0 && after[i].Version != b.Version {
			out = append(out, ProviderChange{Provider: after[i].Address, From: b.Version, To: after[i].Version})
		}
	}
	slices.SortFunc(out, func(a, b ProviderChange) int { return strings.Compare(a.Provider, b.Provider) })
	return out
}

// lockConflict matches terraform's (and OpenTofu's) init errors about a lock the
// configuration or the provider sources cannot honour: a version constraint the locked
// version does not meet, or a locked version no source offers any more.
var lockConflict = regexp.MustCompile(`(?s)locked provider \S+\s+\S+\s+does not match\s+configured\s+version\s+constraint|previously-selected\s+version\s+\S+\s+is\s+no\s+longer\s+available`)

// readLock is the dependency lock of the workspace directory dir; nil when there is none.
func readLock(dir string) []byte {
	b, err := os.ReadFile(filepath.Join(dir, lockFile))
	if err != nil {
		return nil
	}
	return b
}

// writeLock makes lock the dependency lock of dir before an init.
func writeLock(dir string, lock []byte) error {
	if err := os.WriteFile(filepath.Join(dir, lockFile), lock, 0o600); err != nil {
		return fmt.Errorf("write dependency lock: %w", err)
	}
	return nil
}

// initLocked runs terraform init for ws. With a lock, init installs its versions; when the
// configuration or the provider sources cannot honour it (a constraint the locked version
// does not meet, a version no longer offered), init chooses again with -upgrade, and the
// plan names the providers that moved (Plan.ProviderChanges). Without a lock, a changed
// configuration (changed) may pin other versions than the last init chose: it upgrades.
func (e *Engine) initLocked(ctx context.Context, ws Workspace, tf *tfexec.Terraform, changed bool) error {
	if ws.Lock == nil {
		return e.run(ctx, ws, "init", func(ctx context.Context) error {
			return initTerraform(ctx, tf, e.terraformEnv(ws), changed, ws.BackendConfig)
		})
	}
	if err := writeLock(e.Dir(ws.ID), ws.Lock); err != nil {
		return err
	}
	err := e.run(ctx, ws, "init", func(ctx context.Context) error {
		return initTerraform(ctx, tf, e.terraformEnv(ws), false, ws.BackendConfig)
	})
	if err != nil && lockConflict.MatchString(err.Error()) {
		err = e.run(ctx, ws, "init", func(ctx context.Context) error {
			return initTerraform(ctx, tf, e.terraformEnv(ws), true, ws.BackendConfig)
		})
	}
	return err
}

// providerText lists the provider versions a plan moves to, above its changes.
func providerText(moved []ProviderChange) string {
	if len(moved) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Provider versions outside the dependency lock:\n")
	for _, c := range moved {
		b.WriteString("  " + c.String() + "\n")
	}
	return b.String() + "\n"
}
