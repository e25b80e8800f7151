package runner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"

	"terraplane.io/terraplane/internal/resource"
)

// fakeProcess is a runner that is alive (or has exited), last active at last, with
// busy runs in flight; stopped says whether it was told to stop.
func fakeProcess(pool PoolRef, alive bool, last time.Time, busy int64) (*process, *bool) {
	stopped := false
	proc := &process{pool: pool, client: &Client{}, exited: make(chan struct{}), stop: func() { stopped = true }}
	if !alive {
		close(proc.exited)
	}
	proc.client.busy.Store(busy)
	proc.client.last.Store(last.UnixNano())
	return proc, &stopped
}

// TestPoolLimit: a namespace runs at most its cap of runners; pools of other
// namespaces and runners that have exited do not count; past the cap the resource is
// Synced=False with ReasonPoolLimit, in a message that says what to do.
func TestPoolLimit(t *testing.T) {
	now := time.Now()
	running := func(pools ...PoolRef) map[PoolRef]*process {
		m := map[PoolRef]*process{}
		for _, p := range pools {
			m[p], _ = fakeProcess(p, true, now, 0)
		}
		return m
	}
	a := func(name string) PoolRef { return PoolRef{"tenant-a", name} }
	exited, _ := fakeProcess(a("gone"), false, now, 0)
	for _, tc := range []struct {
		name    string
		max     int
		running map[PoolRef]*process
		refused bool
	}{
		{"under the cap", 2, running(a("one")), false},
		{"at the cap", 2, running(a("one"), a("two")), true},
		{"other namespaces do not count", 2, running(a("one"), PoolRef{"tenant-b", "x"}, PoolRef{"tenant-b", "y"}), false},
		{"exited runners do not count", 2, map[PoolRef]*process{a("one"): running(a("one"))[a("one")], a("gone"): exited}, false},
		{"the default cap", 0, running(a("1"), a("2"), a("3")), false},
		{"past the default cap", 0, running(a("1"), a("2"), a("3"), a("4")), true},
		{"no cap", -1, running(a("1"), a("2"), a("3"), a("4"), a("5")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Processes{MaxPoolsPerNamespace: tc.max, running: tc.running}
			err := p.admit(a("new"))
			if (err != nil) != tc.refused {
				t.Fatalf("admit: %v; want refused: %v", err, tc.refused)
			}
			if err == nil {
				return
			}
			user, ok := resource.AsUserError(err)
			if !ok || user.Reason != ReasonPoolLimit {
				t.Fatalf("refusal %v; want a user error with reason %s", err, ReasonPoolLimit)
			}
			for _, say := range []string{"tenant-a", "pool new", "--runner-max-pools-per-namespace", "spec.runnerPool", "15m0s"} {
				if !strings.Contains(user.Message, say) {
					t.Errorf("message %q does not say %q", user.Message, say)
				}
			}
		})
	}
}

// TestIdle: a runner is idle when no run is in flight and nothing happened for the TTL.
func TestIdle(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name string
		last time.Duration // before now
		busy int64
		ttl  time.Duration
		want bool
	}{
		{"quiet for the TTL", 10 * time.Minute, 0, 10 * time.Minute, true},
		{"quiet for less", 9 * time.Minute, 0, 10 * time.Minute, false},
		{"a long run in flight", time.Hour, 1, 10 * time.Minute, false},
		{"no TTL", time.Hour, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{}
			c.busy.Store(tc.busy)
			c.last.Store(now.Add(-tc.last).UnixNano())
			if got := c.idle(now, tc.ttl); got != tc.want {
				t.Errorf("idle = %v, want %v", got, tc.want)
			}
		})
	}
	c := &Client{}
	c.touch(1)
	c.touch(-1)
	if c.idle(time.Now(), time.Minute) || !c.idle(time.Now().Add(time.Minute), time.Minute) {
		t.Error("a run that just ended does not count as activity")
	}
}

// TestReapIdle: the reaper stops the idle runners, and only them; a TTL below 0 keeps
// them for ever. A stopped runner's pool may start again (it counts no more).
func TestReapIdle(t *testing.T) {
	now := time.Now()
	quiet, busy, fresh := PoolRef{"a", "quiet"}, PoolRef{"a", "busy"}, PoolRef{"a", "fresh"}
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		want []PoolRef
	}{
		{"default TTL", 0, []PoolRef{quiet}},
		{"a TTL of its own", time.Hour, nil},
		{"for ever", -1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Processes{IdleTTL: tc.ttl, Log: logr.Discard(), running: map[PoolRef]*process{}}
			stopped := map[PoolRef]*bool{}
			for pool, proc := range map[PoolRef]struct {
				last time.Duration
				busy int64
			}{quiet: {16 * time.Minute, 0}, busy: {time.Hour, 1}, fresh: {time.Second, 0}} {
				p.running[pool], stopped[pool] = fakeProcess(pool, true, now.Add(-proc.last), proc.busy)
			}
			p.reapIdle(now)
			var got []PoolRef
			for pool, s := range stopped {
				if *s {
					got = append(got, pool)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("stopped (-want +got):\n%s", d)
			}
			for _, pool := range tc.want {
				if p.running[pool] != nil || p.stopping[pool] == nil {
					t.Errorf("%s is still counted as running", pool)
				}
			}
			if len(p.running) != 3-len(tc.want) || slices.Contains(tc.want, busy) {
				t.Errorf("running after the reaper: %v", p.running)
			}
		})
	}
}
