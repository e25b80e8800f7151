package plugins

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"terraplane.io/terraplane/internal/devenv"
)

// randomProvider is the random provider's binary in the test plugin mirror.
func randomProvider(t *testing.T) Provider {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the random provider")
	}
	bins, _ := filepath.Glob(filepath.Join(devenv.PluginMirror(), "registry.terraform.io", "hashicorp", "random", "*", "*", "terraform-provider-random*"))
	if len(bins) == 0 {
		t.Fatalf("the random provider is not in %s: run `make tools-test`", devenv.PluginMirror())
	}
	return Provider{Address: "registry.terraform.io/hashicorp/random", Binary: bins[0]}
}

// testPool is a pool serving runs runs per process, stopped with the test, and the random
// provider to start in it.
func testPool(t *testing.T, runs int) (Provider, *Pool) {
	t.Helper()
	prov := randomProvider(t)
	pool, err := NewPool(t.TempDir(), Options{RunsPerProcess: runs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Stop)
	return prov, pool
}

// stopRequest is a run's request that the provider of proc stop, as its proxy passes it to
// the pool: true when it goes on to the provider.
func stopRequest(proc *process) bool { return proc.handle.(*execProcess).proxy.stopping() }

// TestSharedProcesses: a process serves up to RunsPerProcess runs at once; a run's stop
// request reaches the provider only once every run it serves has asked, and the process
// is lent no more from the first request; other credentials never share a process.
func TestSharedProcesses(t *testing.T) {
	prov, pool := testPool(t, 2)
	ctx := context.Background()
	env := map[string]string{"TOKEN": "one"}
	acquire := func(env map[string]string) *Lease {
		t.Helper()
		l, err := pool.Acquire(ctx, []Provider{prov}, env, []byte("config"), []string{"random_pet"})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	socket := func(l *Lease) string { return l.Reattach[prov.Address].Addr.String }
	a, b, c := acquire(env), acquire(env), acquire(env)
	if socket(a) != socket(b) || socket(c) == socket(a) || pool.Started() != 2 {
		t.Fatalf("three runs, two per process: sockets %s %s %s, %d started", socket(a), socket(b), socket(c), pool.Started())
	}
	if other := acquire(map[string]string{"TOKEN": "two"}); socket(other) == socket(c) {
		t.Fatal("runs with other credentials shared a process")
	} else {
		other.Release(true)
	}

	shared := a.procs[0]
	if stopRequest(shared) {
		t.Fatal("one of two runs asked to stop, and the provider was told to")
	}
	if d := acquire(env); socket(d) == socket(a) {
		t.Fatal("a process asked to stop was lent again")
	} else {
		d.Release(true)
	}
	if !stopRequest(shared) {
		t.Fatal("both runs asked to stop, and the provider was not told to")
	}
	a.Release(false)
	if !shared.alive() {
		t.Fatal("the process was killed while a run still used it")
	}
	b.Release(false)
	<-shared.handle.Exited() // killed once its last run ended
	c.Release(true)
}

// TestRunsWaitForAStartingProcess: runs that arrive together share the process the first
// of them starts, rather than each starting its own.
func TestRunsWaitForAStartingProcess(t *testing.T) {
	prov, pool := testPool(t, 4)
	leases := make([]*Lease, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range leases {
		wg.Go(func() {
			leases[i], errs[i] = pool.Acquire(context.Background(), []Provider{prov}, nil, []byte("config"), nil)
		})
	}
	wg.Wait()
	for i, l := range leases {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		defer l.Release(true)
	}
	if got := pool.Started(); got != 1 {
		t.Errorf("four runs arriving together started %d processes, want 1", got)
	}
}

// TestStopAfterAnInterruptedRunLeft: a run that asked to stop and has gone no longer
// counts, so a second request among three runs is still not passed on while one of them
// has not asked.
func TestStopAfterAnInterruptedRunLeft(t *testing.T) {
	prov, pool := testPool(t, 3)
	var leases []*Lease
	for range 3 {
		l, err := pool.Acquire(context.Background(), []Provider{prov}, nil, []byte("config"), nil)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
	}
	shared := leases[0].procs[0]
	if stopRequest(shared) {
		t.Fatal("the first of three runs asked to stop, and the provider was told to")
	}
	leases[0].Release(false)
	if stopRequest(shared) {
		t.Fatal("the second of three runs asked to stop while the third had not, and the provider was told to")
	}
	leases[1].Release(false)
	leases[2].Release(true)
}
