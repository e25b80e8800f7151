package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// backend is a StateBackend that counts its closes.
type backend struct{ closed atomic.Int32 }

func (b *backend) Kubeconfig() string { return "/run/state.kubeconfig" }
func (b *backend) Close() error       { b.closed.Add(1); return nil }

func (b *backend) Hold(string, string, []byte) func() []byte { return func() []byte { return nil } }

// TestStateBackend: terraform finds the engine's state backend in KUBE_CONFIG_PATH, in
// place of the environment's cluster; Stop closes it only once no command runs, as an
// interrupted command writes its state through it.
func TestStateBackend(t *testing.T) {
	t.Setenv("KUBE_IN_CLUSTER_CONFIG", "true")
	t.Setenv("KUBE_CONFIG_PATH", "/the/pool/kubeconfig")
	b := &backend{}
	e := newEngine(t)
	e.opts.StateBackend = b
	env := e.env(Workspace{ID: "w"})
	if env["KUBE_CONFIG_PATH"] != b.Kubeconfig() || env["KUBE_IN_CLUSTER_CONFIG"] != "" {
		t.Errorf("terraform's environment: KUBE_CONFIG_PATH=%q KUBE_IN_CLUSTER_CONFIG=%q", env["KUBE_CONFIG_PATH"], env["KUBE_IN_CLUSTER_CONFIG"])
	}
	release, err := e.acquire(context.Background(), Workspace{ID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	e.Stop()
	time.Sleep(300 * time.Millisecond)
	if b.closed.Load() != 0 {
		t.Fatal("the state backend closed while a command ran")
	}
	release()
	deadline := time.Now().Add(5 * time.Second)
	for b.closed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if b.closed.Load() != 1 {
		t.Fatalf("closed %d times once no command ran, want 1", b.closed.Load())
	}
}

// holdingBackend records the holds taken on its states, and whether each was released.
type holdingBackend struct {
	backend
	holds []string // namespace/name of each hold
	known []string // what each hold was told the Secret is
	held  int      // holds not yet released
}

func (b *holdingBackend) Hold(namespace, name string, known []byte) func() []byte {
	b.known = append(b.known, string(known))
	b.holds = append(b.holds, namespace+"/"+name)
	b.held++
	n := len(b.holds)
	return func() []byte { b.held--; return []byte(fmt.Sprintf("last of hold %d", n)) }
}

// TestCommandsHoldTheirLockedState: a command run under the engine's state lock has the
// state backend answer terraform's reads of the state (Hold) for as long as it runs,
// from what the lock wrote of it if it did, and released before the lock is, which is
// told what the state backend last saw of the state; a command
// tried again after its state was seeded anew holds it anew, knowing nothing of it; a
// command without the lock, or a workspace the engine does not lock, holds nothing.
func TestCommandsHoldTheirLockedState(t *testing.T) {
	backend := map[string]string{"namespace": "ns", "secret_suffix": "abc"}
	const seeded = `{"kind":"Secret"}` // what the lock wrote
	for _, tc := range []struct {
		name  string
		ws    Workspace
		verb  string
		fails int // runs that fail for want of a state before one succeeds
		holds int
		known []string // what each hold was told
		told  string   // what the unlock was told
	}{
		{name: "an apply", ws: Workspace{ID: "w", BackendConfig: backend}, verb: "apply", holds: 1, known: []string{seeded}, told: "last of hold 1"},
		{name: "a drift check's plan", ws: Workspace{ID: "w", BackendConfig: backend}, verb: "plan", holds: 1, known: []string{seeded}, told: "last of hold 1"},
		{name: "an apply tried again on a seeded state", ws: Workspace{ID: "w", BackendConfig: backend}, verb: "apply", fails: 1, holds: 2, known: []string{seeded, ""}, told: "last of hold 2"},
		{name: "an output, without the lock", ws: Workspace{ID: "w", BackendConfig: backend}, verb: "output"},
		{name: "a local backend", ws: Workspace{ID: "l"}, verb: "apply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &holdingBackend{}
			locker := &orderLocker{backend: b, fakeLocker: fakeLocker{seeded: []byte(seeded)}}
			e := &Engine{opts: Options{Timeout: time.Minute, Locker: locker, StateBackend: b, WorkDir: t.TempDir()}}
			runs := 0
			err := e.run(context.Background(), tc.ws, tc.verb, func(context.Context) error {
				if want := len(b.holds) > 0; (b.held == 1) != want || b.held > 1 {
					t.Errorf("run %d: %d holds in force", runs, b.held)
				}
				if runs++; runs <= tc.fails {
					return errors.New("error loading state: the state is already locked by another terraform client")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if locker.heldAtUnlock != 0 {
				t.Errorf("%d holds in force when the lock was released", locker.heldAtUnlock)
			}
			if len(b.holds) != tc.holds || b.held != 0 {
				t.Fatalf("%d holds (%v), %d left; want %d, none left", len(b.holds), b.holds, b.held, tc.holds)
			}
			for _, h := range b.holds {
				if h != "ns/tfstate-default-abc" {
					t.Errorf("held %s, want ns/tfstate-default-abc", h)
				}
			}
			if !slices.Equal(b.known, tc.known) {
				t.Errorf("the holds were told %q, want %q", b.known, tc.known)
			}
			if tc.holds > 0 && !slices.Equal(locker.told, []string{tc.told}) {
				t.Errorf("the unlock was told %q, want %q: what the state backend last saw", locker.told, tc.told)
			}
		})
	}
}

// orderLocker is a fakeLocker that notes the holds in force when its lock is released.
type orderLocker struct {
	fakeLocker
	backend      *holdingBackend
	heldAtUnlock int
	told         []string // what each unlock was told of the state
}

func (l *orderLocker) LockState(ctx context.Context, backend map[string]string, verb string, create bool) (func(bool, []byte), []byte, error) {
	unlock, seeded, err := l.fakeLocker.LockState(ctx, backend, verb, create)
	return func(settled bool, state []byte) {
		l.heldAtUnlock += l.backend.held
		l.told = append(l.told, string(state))
		unlock(settled, state)
	}, seeded, err
}
