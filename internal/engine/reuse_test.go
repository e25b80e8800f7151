package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/plugins"
)

// petModule uses the real random provider: a provider process terraform would start on
// every command.
const petModule = `
terraform {
  required_providers {
    random = { source = "hashicorp/random" }
  }
}
resource "random_pet" "p" {}
output "pet" { value = random_pet.p.id }
`

func reuseEngine(t *testing.T) *Engine {
	t.Helper()
	if testing.Short() {
		t.Skip("runs terraform and the random provider")
	}
	mirror := devenv.PluginMirror()
	if _, err := os.Stat(filepath.Join(mirror, "registry.terraform.io", "hashicorp", "random")); err != nil {
		t.Fatalf("the random provider is not in %s: run `make tools-test`", mirror)
	}
	e, err := New(context.Background(), Options{WorkDir: t.TempDir(), PluginMirror: mirror, ProviderReuse: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	return e
}

// TestProviderReuse: one provider process serves a workspace's create and plans and
// another workspace of the same configuration; other credentials get a process of
// their own; concurrent runs share one; Stop ends them all.
func TestProviderReuse(t *testing.T) {
	e := reuseEngine(t)
	ctx := context.Background()
	files := map[string][]byte{"main.tf": []byte(petModule)}
	first := Workspace{ID: "a", Files: files, Env: map[string]string{"TOKEN": "one"}}
	if _, err := e.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		plan, err := e.Plan(ctx, first, PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if plan.HasChanges() {
			t.Fatalf("a plan after the create has changes: %v", plan.Changes)
		}
	}
	if _, err := e.Create(ctx, Workspace{ID: "b", Files: files, Env: first.Env}); err != nil {
		t.Fatal(err)
	}
	if got := e.plugins.Started(); got != 1 {
		t.Fatalf("%d provider processes started for two workspaces of one configuration, want 1", got)
	}
	if _, err := e.Create(ctx, Workspace{ID: "c", Files: files, Env: map[string]string{"TOKEN": "two"}}); err != nil {
		t.Fatal(err)
	}
	if got := e.plugins.Started(); got != 2 {
		t.Fatalf("other credentials: %d processes started, want 2 (never shared across credentials)", got)
	}

	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, id := range []string{"d", "e", "f"} {
		wg.Go(func() { _, errs[i] = e.Create(ctx, Workspace{ID: id, Files: files, Env: first.Env}) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := e.plugins.Started(); got != 2 {
		t.Fatalf("three creates at once: %d processes started in all, want 2 (they share the first one)", got)
	}
	provs, err := installedProviders(e.Dir("a"))
	if err != nil || len(provs) != 1 {
		t.Fatalf("installed providers: %v %v", provs, err)
	}
	addr := provs[0].Address
	// a process that crashed while idle is replaced
	pool := e.plugins.(*plugins.Pool)
	before := e.plugins.Started()
	for _, pid := range pool.PIDs() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for syscall.Kill(pid, 0) == nil { // until the pool has seen it exit
			time.Sleep(10 * time.Millisecond)
		}
	}
	if _, err := e.Plan(ctx, first, PlanOptions{}); err != nil {
		t.Fatalf("plan after the provider processes crashed: %v", err)
	}
	if e.plugins.Started() == before {
		t.Fatal("no new provider process after the idle ones crashed")
	}

	// Stop ends the idle processes at once; one still lent keeps its socket until its run
	// ends. Terraform is never given the controller's pid: its plugin client kills the
	// pid it is given when it cannot reach the socket.
	lent, err := e.plugins.Acquire(ctx, provs, e.env(first), providerConfig(first), nil)
	if err != nil {
		t.Fatal(err)
	}
	if pid := lent.Reattach[addr].Pid; pid == os.Getpid() || pid == 0 {
		t.Fatalf("terraform is given pid %d for the provider", pid)
	}
	pids := append(pool.PIDs(), lent.Reattach[addr].Pid)
	e.Stop()
	if _, err := os.Stat(lent.Reattach[addr].Addr.String); err != nil {
		t.Fatalf("the socket of a lent process is gone after Stop: %v", err)
	}
	lent.Release(true)
	for _, pid := range pids {
		for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("provider process %d still runs after Stop", pid)
			}
		}
	}
}

// TestProviderSchemaTrimmed: a reused provider describes to terraform only the types the
// workspace's files name. A type only the state still holds (its resource removed from
// the module) makes terraform stop before changing anything; the engine then runs the
// verb again with every type described, and keeps doing so for that workspace.
func TestProviderSchemaTrimmed(t *testing.T) {
	e := reuseEngine(t)
	var plans atomic.Int32
	e.opts.OnRun = func(r Run) {
		if r.Verb == "plan" {
			plans.Add(1)
		}
	}
	ctx := context.Background()
	both := petModule + `resource "random_id" "i" { byte_length = 4 }` + "\n"
	ws := Workspace{ID: "a", Files: map[string][]byte{"main.tf": []byte(both)}}
	if _, err := e.Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	ws.Files = map[string][]byte{"main.tf": []byte(petModule)}
	plan, err := e.Plan(ctx, ws, PlanOptions{})
	if err != nil {
		t.Fatalf("plan of a module without random_id while the state holds one: %v", err)
	}
	if c := CountChanges(plan.Changes); c.Destroy != 1 || plan.Changes[0].Address != "random_id.i" {
		t.Errorf("plan: %v, want random_id.i destroyed", plan.Changes)
	}
	if got := plans.Load(); got != 2 {
		t.Errorf("%d plans ran, want 2: one told of the named types only, then one told of all", got)
	}
	if _, err := os.Stat(filepath.Join(e.Dir("a"), fullSchemaFile)); err != nil {
		t.Errorf("the workspace is not marked to describe every type: %v", err)
	}
	if _, err := e.Plan(ctx, ws, PlanOptions{}); err != nil || plans.Load() != 3 {
		t.Errorf("the next plan: %v, %d plans in all; want it to run once, with every type", err, plans.Load())
	}
}

// TestSavedPlanAppliesWithoutInit: a create planned first (a plan, then the apply of the
// saved plan) initialises its workspace once; the apply finds it holding the plan's
// providers and runs no init of its own (TestLockedProviders applies a plan whose lock
// the workspace does not hold).
func TestSavedPlanAppliesWithoutInit(t *testing.T) {
	e := reuseEngine(t)
	verbs := recordVerbs(e)
	ctx := context.Background()
	ws := Workspace{ID: "a", Files: map[string][]byte{"main.tf": []byte(petModule)}}
	plan, err := e.Plan(ctx, ws, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Lock == nil {
		t.Fatal("the plan holds no lock")
	}
	if _, err := e.ApplyPlan(ctx, ws, plan); err != nil {
		t.Fatal(err)
	}
	if want := []string{"init", "plan", "show", "apply"}; !slices.Equal(verbs(), want) {
		t.Errorf("verbs %v, want %v", verbs(), want)
	}
}

// TestRecordedLockNeedsNoInit: the runs after a create are given the dependency lock the
// create recorded; the workspace, initialised without one, holds that lock already and
// runs no init again.
func TestRecordedLockNeedsNoInit(t *testing.T) {
	e := reuseEngine(t)
	verbs := recordVerbs(e)
	ctx := context.Background()
	ws := Workspace{ID: "a", Files: map[string][]byte{"main.tf": []byte(petModule)}}
	res, err := e.Create(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lock == nil {
		t.Fatal("the create recorded no lock")
	}
	ws.Lock = res.Lock
	if _, err := e.Plan(ctx, ws, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"init", "apply", "plan"}; !slices.Equal(verbs(), want) {
		t.Errorf("verbs %v, want %v", verbs(), want)
	}
}

// recordVerbs makes e record the verb of every terraform command it runs, returned by
// the function it returns.
func recordVerbs(e *Engine) func() []string {
	var verbs []string
	var mu sync.Mutex
	e.opts.OnRun = func(r Run) {
		mu.Lock()
		defer mu.Unlock()
		verbs = append(verbs, r.Verb)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(verbs)
	}
}

// TestDriftCheckRereads: a drift check (PlanOptions.Reread) that follows a plan without
// changes asks the provider that plan's reads again and runs no terraform when they are
// answered alike. A check that reads outputs, other inputs, or a state written since
// run terraform again; a plan that is not a drift check always does.
func TestDriftCheckRereads(t *testing.T) {
	e := reuseEngine(t)
	var mu sync.Mutex
	var verbs []string
	e.opts.OnRun = func(r Run) {
		mu.Lock()
		defer mu.Unlock()
		verbs = append(verbs, r.Verb)
	}
	ran := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := verbs
		verbs = nil
		return out
	}
	ctx := context.Background()
	ws := Workspace{ID: "a", Files: map[string][]byte{"main.tf": []byte(petModule)}}
	if _, err := e.Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	ran()
	check := func(why string, opts PlanOptions, want ...string) {
		t.Helper()
		plan, err := e.Plan(ctx, ws, opts)
		if err != nil {
			t.Fatal(err)
		}
		if plan.HasChanges() || plan.Lock == nil {
			t.Fatalf("%s: changes %v, lock %q: want none, and the lock", why, plan.Changes, plan.Lock)
		}
		if got := ran(); !slices.Equal(got, want) {
			t.Errorf("%s: ran %q, want %q", why, got, want)
		}
	}
	drift := PlanOptions{Reread: true}
	check("the first check after an apply", drift, "plan")
	check("a check after a plan without changes", drift, RereadVerb)
	check("and the next", drift, RereadVerb)
	check("a plan that is not a drift check", PlanOptions{}, "plan")
	check("a check that reads the outputs", PlanOptions{Reread: true, Outputs: true}, "plan", "output")
	check("a check after that", drift, RereadVerb)

	state := filepath.Join(e.Dir(ws.ID), "terraform.tfstate")
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, append(b, '\n'), 0o600); err != nil { // the state written since
		t.Fatal(err)
	}
	check("a check after the state was written", drift, "plan")
	check("a check after that", drift, RereadVerb)
	ws.Env = map[string]string{"TOKEN": "rotated"}
	check("a check with other credentials", drift, "plan")
	check("a check after that", drift, RereadVerb)
}
