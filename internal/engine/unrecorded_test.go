package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestErroredStateIsSavedFirst: a state terraform could not save (errored.tfstate) is
// kept in the workspace and pushed before the next run plans, so that the next plan
// starts from what was made instead of making it again.
func TestErroredStateIsSavedFirst(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	ws := Workspace{ID: "w", Files: renderEcho(t, "one")}
	if _, err := e.Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	dir := e.Dir(ws.ID)
	made, err := e.PullState(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	// as after a run whose state write failed: the state it made is only in errored.tfstate
	if err := os.WriteFile(filepath.Join(dir, erroredStateFile), []byte(made), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "terraform.tfstate")); err != nil {
		t.Fatal(err)
	}
	if err := syncFiles(dir, ws.Files); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, erroredStateFile)); err != nil {
		t.Fatalf("the workspace sync removed the unsaved state: %v", err)
	}
	plan, err := e.Plan(ctx, ws, PlanOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	if plan.HasChanges() {
		t.Fatalf("the plan after a lost state write would change %v; want the unsaved state pushed first", plan.Changes)
	}
	if _, err := os.Stat(filepath.Join(dir, erroredStateFile)); !os.IsNotExist(err) {
		t.Errorf("errored.tfstate is still there once pushed: %v", err)
	}
}

// TestUnsavedStateMakesTheOutcomeUnknown: a failed command that left errored.tfstate
// reports an outcome that may not be recorded.
func TestUnsavedStateMakesTheOutcomeUnknown(t *testing.T) {
	e := &Engine{opts: Options{WorkDir: t.TempDir(), Timeout: time.Minute}}
	if err := os.MkdirAll(e.Dir("w"), 0o700); err != nil {
		t.Fatal(err)
	}
	ws := Workspace{ID: "w"}
	failed := func(context.Context) error { return os.ErrPermission }
	if err := e.run(context.Background(), ws, "apply", failed); OutcomeUnknown(err) {
		t.Errorf("a plain failure: %v reads as unrecorded", err)
	}
	if err := os.WriteFile(filepath.Join(e.Dir("w"), erroredStateFile), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := e.run(context.Background(), ws, "apply", failed)
	if !OutcomeUnknown(err) || !strings.Contains(err.Error(), "could not save the state") {
		t.Errorf("a failure that left an unsaved state: %v, want an unrecorded outcome", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.run(ctx, ws, "apply", failed); !OutcomeUnknown(err) {
		t.Errorf("an interrupted run: %v, want an unrecorded outcome", err)
	}
}
