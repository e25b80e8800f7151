package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"terraplane.io/terraplane/internal/devenv"
)

// randomMirror is a filesystem mirror holding the random provider at versions, each the
// binary the tool cache built (terraform does not ask a provider its version): the
// directory and file names make the versions, and their hashes differ.
func randomMirror(t *testing.T, dir string, versions ...string) {
	t.Helper()
	shared := filepath.Join(devenv.PluginMirror(), "registry.terraform.io", "hashicorp", "random", "3.9.0", "linux_amd64", "terraform-provider-random_v3.9.0_x5")
	bin, err := filepath.EvalSymlinks(shared)
	if err != nil {
		t.Fatalf("the random provider is not in the tool cache (%v): run `make tools`", err)
	}
	for _, v := range versions {
		d := filepath.Join(dir, "registry.terraform.io", "hashicorp", "random", v, "linux_amd64")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(bin, filepath.Join(d, "terraform-provider-random_v"+v+"_x5")); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
}

// installedRandom is the random provider version init installed in workspace id.
func installedRandom(t *testing.T, e *Engine, id string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(e.Dir(id), dataDir, "providers", "registry.terraform.io", "hashicorp", "random", "*"))
	if len(dirs) != 1 {
		t.Fatalf("installed random providers: %v, want one", dirs)
	}
	return filepath.Base(dirs[0])
}

// lockedRandom is the random provider version lock holds.
func lockedRandom(t *testing.T, lock []byte) string {
	t.Helper()
	ps, err := lockedVersions(lock)
	if err != nil || len(ps) != 1 {
		t.Fatalf("lock %q: %v %v", lock, ps, err)
	}
	return ps[0].Version
}

// TestLockedProviders runs the real terraform against a mirror that gains a newer random
// provider: a workspace keeps the version of its lock across an engine restart; a plan
// that looks for upgrades is made with the locked one and offers the newer lock; a plan
// with that lock (a new revision's) names the move from the lock it ran with, as does a
// plan whose lock the module's constraint no longer allows; applying it moves the
// workspace.
func TestLockedProviders(t *testing.T) {
	if testing.Short() {
		t.Skip("runs terraform and the random provider")
	}
	ctx := context.Background()
	mirror, work := t.TempDir(), t.TempDir()
	randomMirror(t, mirror, "3.9.0")
	start := func() *Engine {
		e, err := New(ctx, Options{WorkDir: work, PluginMirror: mirror})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	module := strings.Replace(petModule, `source = "hashicorp/random" }`, `source = "hashicorp/random", version = "~> 3.9" }`, 1)
	ws := Workspace{ID: "pet", Files: map[string][]byte{"main.tf": []byte(module)}}
	res, err := start().Create(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if got := lockedRandom(t, res.Lock); got != "3.9.0" {
		t.Fatalf("create ran with random %s, want 3.9.0", got)
	}

	randomMirror(t, mirror, "3.10.0")
	e := start() // a restart: the init cache is empty, the mirror read again
	ws.Lock = res.Lock
	plan, err := e.Plan(ctx, ws, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.HasChanges() || installedRandom(t, e, ws.ID) != "3.9.0" || lockedRandom(t, plan.Lock) != "3.9.0" {
		t.Fatalf("after the restart: changes %v %v, installed %s; want none and 3.9.0 kept", plan.Changes, plan.ProviderChanges, installedRandom(t, e, ws.ID))
	}

	looked, err := e.Plan(ctx, ws, PlanOptions{LookForUpgrades: true, Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	if looked.HasChanges() || lockedRandom(t, looked.Lock) != "3.9.0" || lockedRandom(t, looked.Upgrade) != "3.10.0" {
		t.Fatalf("looking for upgrades: changes %v %v, lock %s, upgrade %q; want none, 3.9.0 kept and 3.10.0 offered",
			looked.Changes, looked.ProviderChanges, lockedRandom(t, looked.Lock), looked.Upgrade)
	}

	moving := ws
	moving.Lock = looked.Upgrade // a new revision's lock, the workspace ran with 3.9.0
	upgrade, err := e.Plan(ctx, moving, PlanOptions{LockedBefore: ws.Lock, Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	want := []ProviderChange{{Provider: "registry.terraform.io/hashicorp/random", From: "3.9.0", To: "3.10.0"}}
	if diff := cmp.Diff(want, upgrade.ProviderChanges); diff != "" || len(upgrade.Changes) != 0 || upgrade.ID == "" || len(upgrade.File) == 0 {
		t.Fatalf("upgrade plan: id %q, changes %v, file %d bytes; provider changes (-want +got):\n%s", upgrade.ID, upgrade.Changes, len(upgrade.File), diff)
	}
	if !strings.Contains(upgrade.Text, "hashicorp/random 3.9.0 -> 3.10.0") {
		t.Errorf("the plan's text does not name the upgrade:\n%s", upgrade.Text)
	}
	again, err := e.Plan(ctx, moving, PlanOptions{LockedBefore: ws.Lock, Key: []byte("k")})
	if err != nil || again.ID != upgrade.ID {
		t.Fatalf("the same upgrade planned again: id %q (%v), want %q", again.ID, err, upgrade.ID)
	}

	tighter := ws
	tighter.ID = "pet-tighter"
	tighter.Files = map[string][]byte{"main.tf": []byte(strings.Replace(module, "~> 3.9", "~> 3.10", 1))}
	if _, err := e.Create(ctx, Workspace{ID: tighter.ID, Files: ws.Files, Lock: ws.Lock}); err != nil {
		t.Fatal(err)
	}
	conflict, err := e.Plan(ctx, tighter, PlanOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, conflict.ProviderChanges); diff != "" {
		t.Errorf("a lock the constraint excludes: provider changes (-want +got):\n%s", diff)
	}

	applied, err := e.ApplyPlan(ctx, moving, upgrade)
	if err != nil {
		t.Fatal(err)
	}
	if got := lockedRandom(t, applied.Lock); got != "3.10.0" {
		t.Fatalf("after the approved upgrade: lock %s, want 3.10.0", got)
	}
	ws.Lock = applied.Lock
	after, err := e.Plan(ctx, ws, PlanOptions{LookForUpgrades: true})
	if err != nil || after.HasChanges() || after.Upgrade != nil {
		t.Fatalf("a plan after the upgrade: %v %v (%v), want no changes", after.Changes, after.ProviderChanges, err)
	}
}
