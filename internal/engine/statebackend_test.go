package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// backend is a StateBackend that counts its closes.
type backend struct{ closed atomic.Int32 }

func (b *backend) Kubeconfig() string { return "/run/state.kubeconfig" }
func (b *backend) Close() error       { b.closed.Add(1); return nil }

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
