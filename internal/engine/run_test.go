package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// messageless is an error with no message, as terraform-exec returns for a process that
// exited cleanly just as its context ended: asking for its message panics.
type messageless struct{ err error }

func (e messageless) Error() string { return e.err.Error() }

func TestRunInterruptedNeverAsksTheRunsErrorForItsMessage(t *testing.T) {
	e := &Engine{opts: Options{Timeout: time.Minute}}
	ctx, cancel := context.WithCancel(context.Background())
	err := e.run(ctx, Workspace{}, "plan", func(context.Context) error {
		cancel()
		return messageless{}
	})
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "terraform plan was interrupted") {
		t.Fatalf("got %v, want an interrupted plan", err)
	}
}

// fakeLocker holds nothing, counting the locks taken and the states seeded; released
// records, for each lock, whether it was taken for a create and released settled.
type fakeLocker struct {
	locks, seeds int
	released     []string
	seeded       []byte // what each lock says it wrote
}

// HolderID is the id the fake's locks would name their holder by.
func (f *fakeLocker) HolderID() string { return "fake-locker" }

func (f *fakeLocker) LockState(_ context.Context, _ map[string]string, _ string, create bool) (func(bool, []byte), []byte, error) {
	f.locks++
	return func(settled bool, _ []byte) {
		f.released = append(f.released, fmt.Sprintf("create=%v settled=%v", create, settled))
	}, f.seeded, nil
}

func (f *fakeLocker) SeedState(context.Context, map[string]string) error {
	f.seeds++
	return nil
}

// TestRunSeedsAStateTerraformWouldLock: a command that locks the state has it seeded by
// its lock, not before (the lock writes both at once). Terraform locks a workspace's
// state itself to write its first one; under the engine's lock that fails (the state
// deleted since, say), so the engine seeds the state and runs the command again. A
// command after that seeds nothing more.
func TestRunSeedsAStateTerraformWouldLock(t *testing.T) {
	locker := &fakeLocker{}
	e := &Engine{opts: Options{Timeout: time.Minute, Locker: locker, WorkDir: t.TempDir()}}
	ws := Workspace{ID: "w", BackendConfig: map[string]string{"namespace": "ns", "secret_suffix": "abc"}}
	tries := 0
	err := e.run(context.Background(), ws, "apply", func(context.Context) error {
		if tries++; tries == 1 {
			return errors.New("error loading state: the state is already locked by another terraform client")
		}
		return nil
	})
	if err != nil || tries != 2 || locker.seeds != 1 || locker.locks != 1 {
		t.Fatalf("err %v after %d tries, %d seeds, %d locks; want the state seeded by the lock, once more after the failure, and one more try under one lock", err, tries, locker.seeds, locker.locks)
	}
	if err := e.run(context.Background(), ws, "output", func(context.Context) error { return nil }); err != nil || locker.locks != 1 || locker.seeds != 1 {
		t.Fatalf("output: %v, %d locks, %d seeds; a command that writes no state takes no lock, and the state is there", err, locker.locks, locker.seeds)
	}
}

// TestCommandsRunOnASeededState: terraform writes a workspace's first state under a lock
// of its own, whatever the command (init, or a state pull on a copied init), and a run
// killed midway leaves that lock behind with no holder to judge; so the engine seeds the
// state before a workspace's first command in the process, and before every init.
func TestCommandsRunOnASeededState(t *testing.T) {
	backend := map[string]string{"namespace": "ns", "secret_suffix": "abc"}
	for _, tc := range []struct {
		name  string
		ws    Workspace
		verbs []string
		seeds int // SeedState calls in all
	}{
		{"init", Workspace{ID: "w", BackendConfig: backend}, []string{"init"}, 1},
		{"a state pull on a copied init", Workspace{ID: "w", BackendConfig: backend}, []string{"state-pull"}, 1},
		{"once per workspace for other commands", Workspace{ID: "w", BackendConfig: backend}, []string{"state-pull", "output", "show"}, 1},
		{"every init", Workspace{ID: "w", BackendConfig: backend}, []string{"init", "output", "init"}, 2},
		{"a local backend: nothing to seed", Workspace{ID: "l"}, []string{"init", "state-pull"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			locker := &fakeLocker{}
			e := &Engine{opts: Options{Timeout: time.Minute, Locker: locker, WorkDir: t.TempDir()}}
			for _, verb := range tc.verbs {
				seedsBefore := locker.seeds
				if err := e.run(context.Background(), tc.ws, verb, func(context.Context) error {
					if seedsBefore == 0 && tc.seeds > 0 && locker.seeds == 0 {
						t.Errorf("%s ran before the state was seeded", verb)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			if locker.seeds != tc.seeds || locker.locks != 0 {
				t.Errorf("%d seeds, %d locks; want %d seeds and no lock", locker.seeds, locker.locks, tc.seeds)
			}
		})
	}
}

// TestCreateLockKeepsAnUnknownOutcome: an apply of a workspace that creates takes its
// lock as a create's, and releases it settled only when its outcome is known: a create
// cut off, out of time or unable to save its state leaves the record on the lock. Other
// commands, and applies that create nothing, lock plainly.
func TestCreateLockKeepsAnUnknownOutcome(t *testing.T) {
	backend := map[string]string{"namespace": "ns", "secret_suffix": "abc"}
	for _, tc := range []struct {
		name    string
		creates bool
		verb    string
		err     error
		unsaved bool // terraform leaves the state it could not save in the workspace
		want    string
	}{
		{"a create that succeeds", true, "apply", nil, false, "create=true settled=true"},
		{"a create that fails plainly", true, "apply", errors.New("Error: creating bucket: AccessDenied"), false, "create=true settled=true"},
		{"a create that could not save its state", true, "apply", errors.New("Error: Failed to persist state"), true, "create=true settled=false"},
		{"a plan of a workspace that creates", true, "plan", nil, false, "create=false settled=true"},
		{"an apply that creates nothing", false, "apply", errors.New("Error: Failed to persist state"), true, "create=false settled=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			locker := &fakeLocker{}
			e := &Engine{opts: Options{Timeout: time.Minute, Locker: locker, WorkDir: t.TempDir()}}
			ws := Workspace{ID: "w", BackendConfig: backend, Creates: tc.creates}
			_ = e.run(context.Background(), ws, tc.verb, func(context.Context) error {
				if tc.unsaved {
					if err := os.MkdirAll(e.Dir(ws.ID), 0o700); err != nil {
						return err
					}
					return errors.Join(tc.err, os.WriteFile(filepath.Join(e.Dir(ws.ID), erroredStateFile), []byte("{}"), 0o600))
				}
				return tc.err
			})
			if len(locker.released) != 1 || locker.released[0] != tc.want {
				t.Errorf("released %v, want [%s]", locker.released, tc.want)
			}
		})
	}
	t.Run("a create cut off", func(t *testing.T) {
		locker := &fakeLocker{}
		e := &Engine{opts: Options{Timeout: time.Minute, Locker: locker, WorkDir: t.TempDir()}}
		ctx, cancel := context.WithCancel(context.Background())
		_ = e.run(ctx, Workspace{ID: "w", BackendConfig: backend, Creates: true}, "apply", func(context.Context) error {
			cancel()
			return errors.New("signal: interrupt")
		})
		if len(locker.released) != 1 || locker.released[0] != "create=true settled=false" {
			t.Errorf("released %v, want the create's record kept", locker.released)
		}
	})
}
