package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"terraplane.io/terraplane/internal/plugins"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-exec/tfexec"
)

// TestBusy: a workspace is busy while any verb runs for it, and only for it.
func TestBusy(t *testing.T) {
	e := &Engine{}
	done1 := e.track("a")
	done2 := e.track("a")
	steps := []struct {
		name  string
		do    func()
		aBusy bool
	}{
		{"two verbs", func() {}, true},
		{"one ended", done1, true},
		{"both ended", done2, false},
	}
	for _, s := range steps {
		s.do()
		if e.Busy("a") != s.aBusy || e.Busy("b") {
			t.Errorf("%s: a busy %v, b busy %v; want %v, false", s.name, e.Busy("a"), e.Busy("b"), s.aBusy)
		}
	}
	if len(e.inflight) != 0 {
		t.Errorf("finished workspaces are still counted: %v", e.inflight)
	}
}

// TestAcquire: a run takes a slot of its group (when groups are capped), then a global
// one; one that gives up waiting holds neither.
func TestAcquire(t *testing.T) {
	e := &Engine{opts: Options{MaxConcurrentPerGroup: 1}, slots: make(chan struct{}, 2)}
	wait := func(group string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		release, err := e.acquire(ctx, Workspace{Group: group})
		if err == nil {
			release()
		}
		return err
	}
	g1, err := e.acquire(context.Background(), Workspace{Group: "g1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := wait("g1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second run of a full group: %v, want it to wait", err)
	}
	if err := wait("g2"); err != nil {
		t.Errorf("a run of another group: %v", err)
	}
	ungrouped, err := e.acquire(context.Background(), Workspace{})
	if err != nil {
		t.Fatal(err)
	}
	if err := wait("g2"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with every global slot taken: %v, want it to wait", err)
	}
	ungrouped()
	if err := wait("g2"); err != nil {
		t.Errorf("g2 after a run that gave up: %v, want its group slot free", err)
	}
	g1()
	if err := wait("g1"); err != nil {
		t.Errorf("g1 after its run ended: %v", err)
	}
	uncapped := &Engine{slots: make(chan struct{}, 2)}
	r1, _ := uncapped.acquire(context.Background(), Workspace{Group: "g"})
	defer r1()
	if err := func() error {
		r, err := uncapped.acquire(context.Background(), Workspace{Group: "g"})
		if err == nil {
			r()
		}
		return err
	}(); err != nil || len(uncapped.groups) != 0 {
		t.Errorf("without group caps: %v, groups %v", err, uncapped.groups)
	}
}

// TestRunReports: each command is counted and reported with its workspace, its timing and
// its error, secret values redacted; the secret variables file exists only while it runs.
func TestRunReports(t *testing.T) {
	var runs []Run
	e := &Engine{opts: Options{Timeout: time.Minute, WorkDir: t.TempDir(), OnRun: func(r Run) { runs = append(runs, r) }}}
	ws := Workspace{ID: "w", Kind: "Bucket.s3.aws.terraplane.io", Name: "ns/b", Env: map[string]string{"TOKEN": "tok-secret"},
		SecretVars: map[string]any{"pw": "hunter22"}}
	if err := os.MkdirAll(e.Dir("w"), 0o700); err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(e.Dir("w"), secretVarsFile)
	var during []bool
	cmd := func(fail error) func(context.Context) error {
		return func(context.Context) error {
			_, err := os.Stat(secretFile)
			during = append(during, err == nil)
			return fail
		}
	}
	start := time.Now()
	if err := e.run(context.Background(), ws, "plan", cmd(nil)); err != nil {
		t.Fatal(err)
	}
	err := e.run(context.Background(), ws, "apply", cmd(fmt.Errorf("apply with tok-secret and hunter22 failed")))
	if err == nil || err.Error() != "apply with (redacted) and (redacted) failed" {
		t.Errorf("error %v, want its secrets redacted", err)
	}
	if diff := cmp.Diff([]bool{true, true}, during); diff != "" {
		t.Errorf("secret variables file while running (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(secretFile); !os.IsNotExist(err) {
		t.Errorf("the secret variables file outlived the run: %v", err)
	}
	if e.Processes() != 2 || len(runs) != 2 {
		t.Fatalf("%d processes, %d runs reported; want 2, 2", e.Processes(), len(runs))
	}
	for i, want := range []struct{ verb, err string }{{"plan", ""}, {"apply", "apply with (redacted) and (redacted) failed"}} {
		r := runs[i]
		got := ""
		if r.Err != nil {
			got = r.Err.Error()
		}
		if r.Verb != want.verb || r.Kind != ws.Kind || r.Name != ws.Name || got != want.err || r.Started.Before(start) || r.Duration < 0 {
			t.Errorf("run %d: %+v, want %s with error %q", i, r, want.verb, want.err)
		}
	}
}

// TestRunAskedForInit: an error asking for terraform init makes the next run initialise
// for real, unless it came from init itself.
func TestRunAskedForInit(t *testing.T) {
	for _, tc := range []struct {
		verb, err string
		stamped   bool
	}{
		{"plan", `Error: Backend initialization required, please run "terraform init"`, false},
		{"apply", "Error: Inconsistent dependency lock file\n\nrun \"tofu init\"", false},
		{"init", `Error: run "terraform init" again`, true},
		{"plan", "Error: something else", true},
	} {
		e := &Engine{opts: Options{Timeout: time.Minute, WorkDir: t.TempDir()}, inits: initCache{root: t.TempDir()}}
		writeFiles(t, e.Dir("w"), map[string]string{initStampFile: "stamp"})
		_ = e.run(context.Background(), Workspace{ID: "w"}, tc.verb, func(context.Context) error { return errors.New(tc.err) })
		_, err := os.Stat(filepath.Join(e.Dir("w"), initStampFile))
		if stamped := err == nil; stamped != tc.stamped {
			t.Errorf("%s failing with %q: stamp kept %v, want %v", tc.verb, tc.err, stamped, tc.stamped)
		}
	}
}

// TestRunTimeout: a command that outlives its deadline, the workspace's own or else the
// engine's, is stopped and reported as such, naming that deadline, its outcome unknown.
func TestRunTimeout(t *testing.T) {
	for name, tc := range map[string]struct {
		engine, own time.Duration
		want        string
	}{
		"the engine's deadline":    {10 * time.Millisecond, 0, "terraform apply did not finish within 10ms: context deadline exceeded"},
		"the workspace's deadline": {time.Hour, 20 * time.Millisecond, "terraform apply did not finish within 20ms: context deadline exceeded"},
	} {
		t.Run(name, func(t *testing.T) {
			e := &Engine{opts: Options{Timeout: tc.engine}}
			err := e.run(context.Background(), Workspace{Timeout: tc.own}, "apply", func(ctx context.Context) error {
				<-ctx.Done()
				return errors.New("signal: interrupt")
			})
			if err == nil || err.Error() != tc.want || !OutcomeUnknown(err) {
				t.Errorf("got %v, want %q, outcome unknown", err, tc.want)
			}
		})
	}
}

// TestRunLocks: the engine takes the state lock around the commands that write state, for
// workspaces whose backend names a state, when it has a locker.
func TestRunLocks(t *testing.T) {
	backend := map[string]string{"secret_suffix": "abc"}
	for _, tc := range []struct {
		verb    string
		locker  bool
		backend map[string]string
		locked  bool
	}{
		{"plan", true, backend, true},
		{"apply", true, backend, true},
		{"destroy", true, backend, true},
		{"state-push", true, backend, true},
		{"init", true, backend, false},
		{"show", true, backend, false},
		{"output", true, backend, false},
		{"state-pull", true, backend, false},
		{"apply", true, map[string]string{"path": "x"}, false},
		{"apply", false, backend, false},
	} {
		f := &fakeLocker{}
		e := &Engine{opts: Options{Timeout: time.Minute}}
		if tc.locker {
			e.opts.Locker = f
		}
		if err := e.run(context.Background(), Workspace{BackendConfig: tc.backend}, tc.verb, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if (f.locks == 1) != tc.locked {
			t.Errorf("%s (locker %v, backend %v): %d locks, want locked %v", tc.verb, tc.locker, tc.backend, f.locks, tc.locked)
		}
	}
}

// TestRunOptions: a command gets the providers lent to its workspace and -lock=false when
// the engine holds the lock, where the command takes such options.
func TestRunOptions(t *testing.T) {
	lent := tfexec.ReattachInfo{"registry.terraform.io/hashicorp/random": {}}
	locking := Workspace{ID: "w", BackendConfig: map[string]string{"secret_suffix": "abc"}}
	for _, tc := range []struct {
		name   string
		lent   bool
		locker bool
		got    func(e *Engine) []string
		want   []string
	}{
		{"plan, nothing", false, false, func(e *Engine) []string { return optionTypes(runOptions[tfexec.PlanOption](e, locking)) }, nil},
		{"plan, lent and locked", true, true, func(e *Engine) []string {
			return optionTypes(runOptions[tfexec.PlanOption](e, locking, tfexec.Refresh(false)))
		}, []string{"*tfexec.RefreshOption", "*tfexec.ReattachOption", "*tfexec.LockOption"}},
		{"show takes no lock option", true, true, func(e *Engine) []string { return optionTypes(runOptions[tfexec.ShowOption](e, locking)) },
			[]string{"*tfexec.ReattachOption"}},
		{"state push takes no providers", true, true, func(e *Engine) []string {
			return optionTypes(runOptions[tfexec.StatePushCmdOption](e, locking))
		}, []string{"*tfexec.LockOption"}},
		{"destroy, lent only", true, false, func(e *Engine) []string { return optionTypes(runOptions[tfexec.DestroyOption](e, locking)) },
			[]string{"*tfexec.ReattachOption"}},
	} {
		e := &Engine{lent: map[string]*plugins.Lease{}}
		if tc.lent {
			e.lent["w"] = &plugins.Lease{Reattach: lent}
		}
		if tc.locker {
			e.opts.Locker = &fakeLocker{}
		}
		if diff := cmp.Diff(tc.want, tc.got(e)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// optionTypes are the types of a command's options.
func optionTypes[O any](opts []O) []string {
	var out []string
	for _, o := range opts {
		out = append(out, fmt.Sprintf("%T", o))
	}
	return out
}
