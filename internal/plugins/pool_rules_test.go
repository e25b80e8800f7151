package plugins

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPoolRules: which process the pool lends each run, which it starts, and which it
// kills, as runs come and go, ask to stop, crash and age. Processes are numbered in the
// order started; a run lent 0 got an error.
func TestPoolRules(t *testing.T) {
	started := errors.New("no such binary")
	cases := []struct {
		name  string
		opts  Options
		steps []step
		lent  map[string]int
		stops []bool // what each stop request returned: true when it reaches the provider
	}{{
		name:  "runs of one key share a process up to RunsPerProcess",
		opts:  Options{RunsPerProcess: 2},
		steps: []step{acquire("a", "one"), acquire("b", "one"), acquire("c", "one"), expectStarted(2), expectPIDs(1, 2), expectKilled()},
		lent:  map[string]int{"a": 1, "b": 1, "c": 2},
	}, {
		name: "the process with the fewest runs is lent",
		opts: Options{RunsPerProcess: 2},
		steps: []step{acquire("a", "one"), acquire("b", "one"), acquire("c", "one"), release("a"), release("b"),
			acquire("d", "one"), acquire("e", "one"), acquire("f", "one"), expectStarted(2)},
		lent: map[string]int{"a": 1, "b": 1, "c": 2, "d": 1, "e": 1, "f": 2},
	}, {
		name:  "other credentials never share a process",
		steps: []step{acquire("a", "one"), acquire("b", "two"), acquire("c", "one")},
		lent:  map[string]int{"a": 1, "b": 2, "c": 1},
	}, {
		name:  "a process given back healthy is lent again",
		steps: []step{acquire("a", "one"), release("a"), acquire("b", "one"), expectStarted(1), expectKilled()},
		lent:  map[string]int{"a": 1, "b": 1},
	}, {
		name:  "an interrupted run's process is retired, and killed at once when idle",
		steps: []step{acquire("a", "one"), interrupt("a"), expectKilled(1), acquire("b", "one"), expectPIDs(2)},
		lent:  map[string]int{"a": 1, "b": 2},
	}, {
		name: "an interrupted run's process is killed only when its last run ends",
		opts: Options{RunsPerProcess: 2},
		steps: []step{acquire("a", "one"), acquire("b", "one"), interrupt("a"), expectKilled(), acquire("c", "one"),
			release("b"), expectKilled(1)},
		lent: map[string]int{"a": 1, "b": 1, "c": 2},
	}, {
		name:  "a stop request reaches the provider only once every run it serves has asked",
		opts:  Options{RunsPerProcess: 3},
		steps: []step{acquire("a", "one"), acquire("b", "one"), acquire("c", "one"), askStop("a"), askStop("b"), askStop("c")},
		lent:  map[string]int{"a": 1, "b": 1, "c": 1},
		stops: []bool{false, false, true},
	}, {
		name:  "a process asked to stop is lent no more",
		opts:  Options{RunsPerProcess: 3},
		steps: []step{acquire("a", "one"), acquire("b", "one"), askStop("a"), acquire("c", "one"), expectKilled()},
		lent:  map[string]int{"a": 1, "b": 1, "c": 2},
		stops: []bool{false},
	}, {
		name: "a run that asked to stop and left counts no more",
		opts: Options{RunsPerProcess: 3},
		steps: []step{acquire("a", "one"), acquire("b", "one"), acquire("c", "one"), askStop("a"), interrupt("a"),
			askStop("b"), askStop("c"), interrupt("b"), interrupt("c"), expectKilled(1)},
		lent:  map[string]int{"a": 1, "b": 1, "c": 1},
		stops: []bool{false, false, true},
	}, {
		name:  "a run that did not ask leaves healthy: the askers still wait for the others",
		opts:  Options{RunsPerProcess: 3},
		steps: []step{acquire("a", "one"), acquire("b", "one"), acquire("c", "one"), askStop("a"), release("c"), askStop("b")},
		lent:  map[string]int{"a": 1, "b": 1, "c": 1},
		stops: []bool{false, true},
	}, {
		name:  "a process past its TTL is retired when given back",
		opts:  Options{TTL: 10 * time.Minute},
		steps: []step{acquire("a", "one"), after(11 * time.Minute), release("a"), expectKilled(1), acquire("b", "one")},
		lent:  map[string]int{"a": 1, "b": 2},
	}, {
		name: "the sweep retires a process past its TTL, killed once its run ends",
		opts: Options{TTL: 10 * time.Minute},
		steps: []step{acquire("a", "one"), after(11 * time.Minute), sweep(), expectKilled(), acquire("b", "one"),
			release("a"), expectKilled(1)},
		lent: map[string]int{"a": 1, "b": 2},
	}, {
		name:  "within its TTL a process stays",
		opts:  Options{TTL: 10 * time.Minute},
		steps: []step{acquire("a", "one"), after(9 * time.Minute), release("a"), sweep(), acquire("b", "one"), expectKilled()},
		lent:  map[string]int{"a": 1, "b": 1},
	}, {
		name:  "the sweep kills a process idle past IdleTTL",
		opts:  Options{TTL: 10 * time.Minute, IdleTTL: 2 * time.Minute},
		steps: []step{acquire("a", "one"), release("a"), after(3 * time.Minute), sweep(), expectKilled(1), acquire("b", "one")},
		lent:  map[string]int{"a": 1, "b": 2},
	}, {
		name:  "IdleTTL is half the TTL unless set",
		opts:  Options{TTL: 10 * time.Minute},
		steps: []step{acquire("a", "one"), release("a"), after(4 * time.Minute), sweep(), expectKilled(), after(2 * time.Minute), sweep(), expectKilled(1)},
		lent:  map[string]int{"a": 1},
	}, {
		name:  "a process in use is never idle",
		opts:  Options{TTL: 10 * time.Minute, IdleTTL: 2 * time.Minute},
		steps: []step{acquire("a", "one"), after(3 * time.Minute), sweep(), acquire("b", "one"), expectKilled()},
		lent:  map[string]int{"a": 1, "b": 1},
	}, {
		name: "a process is replaced after MaxUses runs",
		opts: Options{MaxUses: 2},
		steps: []step{acquire("a", "one"), release("a"), acquire("b", "one"), expectKilled(), release("b"), expectKilled(1),
			acquire("c", "one")},
		lent: map[string]int{"a": 1, "b": 1, "c": 2},
	}, {
		name: "past the memory budget the least recently used idle process is stopped",
		opts: Options{MemoryBudget: 250 << 20, RSS: func(int) int64 { return 100 << 20 }},
		steps: []step{acquire("a", "one"), release("a"), after(time.Second), acquire("b", "two"), release("b"), after(time.Second),
			acquire("c", "three"), expectKilled(), release("c"), expectKilled(1), acquire("d", "one"), expectPIDs(2, 3, 4)},
		lent: map[string]int{"a": 1, "b": 2, "c": 3, "d": 4},
	}, {
		name:  "processes in use are never stopped for the budget",
		opts:  Options{MemoryBudget: 150 << 20, RSS: func(int) int64 { return 100 << 20 }},
		steps: []step{acquire("a", "one"), acquire("b", "two"), sweep(), expectKilled(), release("a"), expectKilled(1)},
		lent:  map[string]int{"a": 1, "b": 2},
	}, {
		name:  "a process that crashed while idle is replaced",
		steps: []step{acquire("a", "one"), release("a"), crash(1), acquire("b", "one"), expectStarted(2), expectPIDs(2)},
		lent:  map[string]int{"a": 1, "b": 2},
	}, {
		name:  "a process that crashed in use is retired when its run gives it back healthy",
		steps: []step{acquire("a", "one"), crash(1), release("a"), expectKilled(1), expectPIDs(), acquire("b", "one")},
		lent:  map[string]int{"a": 1, "b": 2},
	}, {
		name:  "the sweep retires a crashed process",
		steps: []step{acquire("a", "one"), release("a"), crash(1), sweep(), expectPIDs(), expectKilled(1)},
		lent:  map[string]int{"a": 1},
	}, {
		name:  "a process that failed to start is never lent; the next run starts another",
		steps: []step{failNextStart(started), acquire("a", "one"), acquire("b", "one"), expectStarted(2), expectPIDs(1)},
		lent:  map[string]int{"a": 0, "b": 1},
	}, {
		name: "Stop kills idle processes at once, lent ones as their runs end, and lends no more",
		steps: []step{acquire("a", "one"), acquire("b", "two"), release("b"), stopPool(), expectKilled(2), acquire("c", "one"),
			release("a"), expectKilled(1, 2)},
		lent: map[string]int{"a": 1, "b": 2, "c": 0},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts)
			h.run(tc.steps)
			if diff := cmp.Diff(tc.lent, h.lentTo); diff != "" {
				t.Errorf("processes lent (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.stops, h.stops); diff != "" {
				t.Errorf("stop requests passed on (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAcquireErrors: a run whose process could not start gets the starter's error, and a
// run of several providers gives back those it got when one fails, healthy: they were
// never used, and other runs share them.
func TestAcquireErrors(t *testing.T) {
	h := newHarness(t, Options{})
	h.starter.fail = errors.New("no such binary")
	_, err := h.pool.Acquire(context.Background(), []Provider{fakeProvider}, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no such binary") {
		t.Fatalf("Acquire: %v, want the starter's error", err)
	}

	second := Provider{Address: "registry.terraform.io/hashicorp/other", Binary: "/bin/terraform-provider-other"}
	first, err := h.pool.Acquire(context.Background(), []Provider{fakeProvider}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.starter.fail = errors.New("other failed")
	if _, err := h.pool.Acquire(context.Background(), []Provider{fakeProvider, second}, nil, nil, nil); err == nil {
		t.Fatal("a run got its providers though one failed to start")
	}
	h.pool.mu.Lock()
	shared, runs := first.procs[0], first.procs[0].runs
	h.pool.mu.Unlock()
	if shared.retired || runs != 1 {
		t.Errorf("after a run of two providers failed to get the second: the first's process is retired: %v, and counts %d runs; want it lent on, with 1 run",
			shared.retired, runs)
	}
}

// TestRunsShareAStartingProcess: runs that arrive while a process starts wait for it
// rather than start their own; a run that gives up waiting leaves the process to the others.
func TestRunsShareAStartingProcess(t *testing.T) {
	h := newHarness(t, Options{})
	h.starter.gate = make(chan struct{})
	key := Key(fakeProvider.Binary, nil, []byte("config"), nil)
	waiting := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			h.pool.mu.Lock()
			runs := 0
			if procs := h.pool.live[key]; len(procs) == 1 {
				runs = procs[0].runs
			}
			h.pool.mu.Unlock()
			if runs == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d runs wait for the starting process, want %d", runs, n)
			}
		}
	}
	ctx, giveUp := context.WithCancel(context.Background())
	impatient := make(chan error, 1)
	go func() {
		_, err := h.pool.Acquire(ctx, []Provider{fakeProvider}, nil, []byte("config"), nil)
		impatient <- err
	}()
	var wg sync.WaitGroup
	pids := make([]int, 3)
	for i := range pids {
		wg.Go(func() {
			l, err := h.pool.Acquire(context.Background(), []Provider{fakeProvider}, nil, []byte("config"), nil)
			if err != nil {
				t.Error(err)
				return
			}
			pids[i] = l.Reattach[fakeProvider.Address].Pid
		})
	}
	waiting(4)
	giveUp()
	if err := <-impatient; !errors.Is(err, context.Canceled) {
		t.Errorf("a run that gave up waiting: %v, want context.Canceled", err)
	}
	waiting(3)
	close(h.starter.gate)
	wg.Wait()
	if diff := cmp.Diff([]int{fakePid(1), fakePid(1), fakePid(1)}, pids); diff != "" {
		t.Errorf("processes lent (-want +got):\n%s", diff)
	}
	h.checkStarted(1)
	h.checkKilled(nil)
}

// TestResidentMemory: a running process's resident memory is read from /proc; a process
// that does not exist has none.
func TestResidentMemory(t *testing.T) {
	if rss := residentMemory(os.Getpid()); rss < 1<<20 {
		t.Errorf("this process holds %d bytes, want at least a MiB", rss)
	}
	if rss := residentMemory(1 << 30); rss != 0 {
		t.Errorf("a process that does not exist holds %d bytes", rss)
	}
}
