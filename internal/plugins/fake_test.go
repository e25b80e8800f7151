package plugins

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeStarter starts fake provider processes, numbered from 1 in the order started.
type fakeStarter struct {
	mu      sync.Mutex
	started []*fakeProcess
	fail    error         // the next start fails with it
	gate    chan struct{} // when set, starts wait until it is closed
}

func (f *fakeStarter) Start(l Launch) (Handle, error) {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail; err != nil {
		f.fail = nil
		return nil, err
	}
	p := &fakeProcess{n: len(f.started) + 1, launch: l, exited: make(chan struct{})}
	f.started = append(f.started, p)
	return p, nil
}

// process is fake process n.
func (f *fakeStarter) process(n int) *fakeProcess {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started[n-1]
}

// killed lists the fake processes killed so far.
func (f *fakeStarter) killed() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, p := range f.started {
		if p.wasKilled() {
			out = append(out, p.n)
		}
	}
	return out
}

// fakeProcess is a provider process that lives until it is killed or crashes.
type fakeProcess struct {
	n      int
	launch Launch
	exited chan struct{}
	once   sync.Once
	mu     sync.Mutex
	kills  int
}

// fakePid is the process id of fake process n.
func fakePid(n int) int { return 1000 + n }

func (p *fakeProcess) Pid() int                { return fakePid(p.n) }
func (p *fakeProcess) Protocol() int           { return 6 }
func (p *fakeProcess) Exited() <-chan struct{} { return p.exited }
func (p *fakeProcess) Kill() {
	p.mu.Lock()
	p.kills++
	p.mu.Unlock()
	p.crash()
}
func (p *fakeProcess) crash() { p.once.Do(func() { close(p.exited) }) }
func (p *fakeProcess) wasKilled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kills > 0
}

// harness drives a pool of fake processes on a clock of its own.
type harness struct {
	t       *testing.T
	pool    *Pool
	starter *fakeStarter
	clock   time.Time
	leases  map[string]*Lease
	lentTo  map[string]int // the fake process each run was lent
	stops   []bool         // what each stop request of a run returned
}

var fakeProvider = Provider{Address: "registry.terraform.io/hashicorp/fake", Binary: "/bin/terraform-provider-fake"}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, starter: &fakeStarter{}, clock: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		leases: map[string]*Lease{}, lentTo: map[string]int{}}
	opts.Starter = h.starter
	pool, err := newPool(t.TempDir(), opts, func() time.Time { return h.clock })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Stop(); pool.kills.Wait() })
	h.pool = pool
	return h
}

// step is one thing that happens to the pool, or one check of it.
type step func(h *harness)

// acquire lends run a process with the credentials creds; a failure is recorded as
// process 0.
func acquire(run, creds string) step {
	return func(h *harness) {
		l, err := h.pool.Acquire(context.Background(), []Provider{fakeProvider}, map[string]string{"TOKEN": creds}, []byte("config"), nil)
		if err != nil {
			h.lentTo[run] = 0
			return
		}
		info := l.Reattach[fakeProvider.Address]
		n := info.Pid - 1000
		if want := h.starter.process(n).launch.Socket; info.Addr.String != want || info.Addr.Network != "unix" || info.ProtocolVersion != 6 || !info.Test {
			h.t.Errorf("run %s is reattached with %+v, want the socket %s, protocol 6, and terraform told not to stop it", run, info, want)
		}
		h.leases[run], h.lentTo[run] = l, n
	}
}

// release ends run healthy; interrupt ends it interrupted.
func release(run string) step   { return func(h *harness) { h.leases[run].Release(true) } }
func interrupt(run string) step { return func(h *harness) { h.leases[run].Release(false) } }

// askStop is run's request that its provider stop, as the proxy puts it to the pool.
func askStop(run string) step {
	return func(h *harness) {
		h.stops = append(h.stops, h.starter.process(h.lentTo[run]).launch.Stopping())
	}
}

func crash(n int) step              { return func(h *harness) { h.starter.process(n).crash() } }
func after(d time.Duration) step    { return func(h *harness) { h.clock = h.clock.Add(d) } }
func failNextStart(err error) step  { return func(h *harness) { h.starter.fail = err } }
func sweep() step                   { return func(h *harness) { h.pool.sweep() } }
func stopPool() step                { return func(h *harness) { h.pool.Stop() } }
func expectKilled(want ...int) step { return func(h *harness) { h.checkKilled(want) } }
func expectPIDs(procs ...int) step  { return func(h *harness) { h.checkPIDs(procs) } }
func expectStarted(want int) step   { return func(h *harness) { h.checkStarted(want) } }
func (h *harness) checkStarted(n int) {
	h.t.Helper()
	if got := h.pool.Started(); got != n {
		h.t.Errorf("%d processes started, want %d", got, n)
	}
}

// checkKilled compares, once the kills under way are done, the processes killed.
func (h *harness) checkKilled(want []int) {
	h.t.Helper()
	h.pool.kills.Wait()
	if diff := cmp.Diff(want, h.starter.killed()); diff != "" {
		h.t.Errorf("processes killed (-want +got):\n%s", diff)
	}
}

func (h *harness) checkPIDs(procs []int) {
	h.t.Helper()
	want := []int{}
	for _, n := range procs {
		want = append(want, fakePid(n))
	}
	got := append([]int{}, h.pool.PIDs()...)
	sort.Ints(got)
	if diff := cmp.Diff(want, got); diff != "" {
		h.t.Errorf("PIDs (-want +got):\n%s", diff)
	}
}

// run runs the steps in order.
func (h *harness) run(steps []step) {
	for _, s := range steps {
		s(h)
	}
}
