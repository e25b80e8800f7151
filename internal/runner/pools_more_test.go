package runner

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"terraplane.io/terraplane/internal/engine"
)

// verbLauncher hands out one client for every pool, or fails, and records what it was
// asked.
type verbLauncher struct {
	client   *Client
	err      error
	launched []PoolRef
	forgot   []PoolRef
	stopped  bool
}

func (f *verbLauncher) Launch(_ context.Context, pool PoolRef) (*Client, error) {
	f.launched = append(f.launched, pool)
	return f.client, f.err
}
func (f *verbLauncher) Running(PoolRef) *Client { return f.client }
func (f *verbLauncher) Forget(pool PoolRef)     { f.forgot = append(f.forgot, pool) }
func (f *verbLauncher) Stop()                   { f.stopped = true }

// verbs calls every Runner method of p on ws and returns their errors by verb.
func verbs(p *Pools, ws engine.Workspace) map[string]error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[string]error{}
	_, out["create"] = p.Create(ctx, ws)
	_, out["plan"] = p.Plan(ctx, ws, engine.PlanOptions{})
	_, out["apply"] = p.ApplyPlan(ctx, ws, &engine.Plan{})
	_, out["outputs"] = p.Outputs(ctx, ws)
	out["destroy"] = p.Destroy(ctx, ws)
	_, out["pull-state"] = p.PullState(ctx, ws)
	_, out["clear-stale-lock"] = p.ClearStaleLock(ctx, ws, false)
	out["remove"] = p.Remove(ctx, ws)
	return out
}

// refusingRunner serves on a unix socket and refuses every call, as a runner does a
// caller with the wrong token.
func refusingRunner(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "runner.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "wrong token", http.StatusUnauthorized)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return sock
}

// TestPoolsRouting: every call goes to the runner of the workspace's pool; a runner that
// does not answer is forgotten (the next call checks it again), one that answers with a
// refusal is not, and a workspace without a namespace or a pool that cannot start fails
// naming why.
func TestPoolsRouting(t *testing.T) {
	ws := engine.Workspace{ID: "uid-1", Pool: "fast", BackendConfig: map[string]string{"namespace": "team-a"}}
	pool := PoolRef{Namespace: "team-a", Name: "fast"}
	for _, tc := range []struct {
		name        string
		launcher    *verbLauncher
		ws          engine.Workspace
		want        string
		launches    int
		forgets     int
		unreachable bool
	}{
		{"no namespace", &verbLauncher{}, engine.Workspace{ID: "uid-2"}, "names no namespace", 0, 0, false},
		{"the pool does not start", &verbLauncher{err: errors.New("no quota")}, ws, "runner pool team-a/fast: no quota", 8, 0, false},
		{"the runner does not answer", &verbLauncher{client: NewClient(filepath.Join(t.TempDir(), "gone.sock"), "t", nil)}, ws, "reach the runner", 8, 8, true},
		{"the runner refuses", &verbLauncher{client: NewClient(refusingRunner(t), "t", nil)}, ws, "401", 8, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Pools{Launcher: tc.launcher}
			for verb, err := range verbs(p, tc.ws) {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: err = %v, want one saying %q", verb, err, tc.want)
				}
				if got := unreachable(err); got != tc.unreachable {
					t.Errorf("%s: unreachable = %v, want %v", verb, got, tc.unreachable)
				}
			}
			if len(tc.launcher.launched) != tc.launches || len(tc.launcher.forgot) != tc.forgets {
				t.Errorf("launched %v, forgot %v; want %d launches and %d forgets", tc.launcher.launched, tc.launcher.forgot, tc.launches, tc.forgets)
			}
			for _, got := range append(tc.launcher.launched, tc.launcher.forgot...) {
				if got != pool {
					t.Errorf("asked about pool %s, want %s", got, pool)
				}
			}
			p.Stop()
			if !tc.launcher.stopped {
				t.Error("Stop did not stop the launcher's runners")
			}
		})
	}
}

// TestOwnedFiles: a file written for a runner is readable by its owner only and given to
// the runner's uid; no uid (-1) leaves it to this process; a file that is not there
// cannot be given away.
func TestOwnedFiles(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine")
	if err := writeOwned(mine, []byte("token"), -1); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(mine); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if err := chown(filepath.Join(dir, "absent"), os.Getuid()); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("chown of a missing file = %v, want an error naming it", err)
	}
	if err := writeOwned(filepath.Join(dir, "no-dir", "f"), nil, -1); err == nil {
		t.Error("writeOwned into a missing directory: no error")
	}
	if os.Geteuid() != 0 {
		return
	}
	theirs := filepath.Join(dir, "theirs")
	if err := writeOwned(theirs, []byte("token"), 30001); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(theirs); err != nil || fi.Sys() == nil || fileOwner(fi) != 30001 {
		t.Errorf("owner of a runner's file: %v, %v; want uid 30001", fi, err)
	}
}

// TestCopyFile: a copy holds the same bytes, readable by everyone, and never overwrites.
func TestCopyFile(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.WriteFile(src, []byte("provider"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(src, dst); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dst)
	fi, _ := os.Stat(dst)
	if err != nil || string(b) != "provider" || fi.Mode().Perm()&0o444 != 0o444 {
		t.Errorf("copy holds %q (%v), mode %v", b, err, fi.Mode())
	}
	if err := copyFile(src, dst); err == nil {
		t.Error("copyFile overwrote an existing file")
	}
	if err := copyFile(filepath.Join(dir, "absent"), filepath.Join(dir, "x")); err == nil {
		t.Error("copyFile of a missing file: no error")
	}
	if err := linkTree(filepath.Join(dir, "absent"), filepath.Join(dir, "y")); err == nil || !strings.Contains(err.Error(), "share") {
		t.Errorf("linkTree of a missing tree = %v, want an error saying what it shares", err)
	}
}
