package plugins

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStats: the pool counts, per provider, runs lent a running process (hits), processes
// started (misses) and processes retired before it stopped (evictions), and lists the
// processes running now, a retired one still serving a run included.
func TestStats(t *testing.T) {
	stats := func(processes int, hits, misses, evictions uint64, pids ...int) map[string]ProviderStats {
		s := ProviderStats{Processes: processes, Hits: hits, Misses: misses, Evictions: evictions}
		for _, n := range pids {
			s.PIDs = append(s.PIDs, fakePid(n))
		}
		return map[string]ProviderStats{fakeProvider.Address: s}
	}
	for _, tc := range []struct {
		name  string
		opts  Options
		steps []step
		want  map[string]ProviderStats
	}{
		{"a first run starts a process", Options{}, []step{acquire("a", "one")}, stats(1, 0, 1, 0, 1)},
		{"the next run is lent it", Options{}, []step{acquire("a", "one"), release("a"), acquire("b", "one")}, stats(1, 1, 1, 0, 1)},
		{"other credentials miss", Options{}, []step{acquire("a", "one"), acquire("b", "two")}, stats(2, 0, 2, 0, 1, 2)},
		{"an interrupted run's process is evicted", Options{}, []step{acquire("a", "one"), interrupt("a")}, stats(0, 0, 1, 1)},
		{"an evicted process serving a run still runs", Options{RunsPerProcess: 2},
			[]step{acquire("a", "one"), acquire("b", "one"), interrupt("a")}, stats(1, 1, 1, 1, 1)},
		{"idle past the TTL: evicted", Options{TTL: time.Minute}, []step{acquire("a", "one"), release("a"), after(2 * time.Minute), sweep()},
			stats(0, 0, 1, 1)},
		{"a failed start is a miss, then an eviction", Options{}, []step{failNextStart(errors.New("no binary")), acquire("a", "one")},
			stats(0, 0, 1, 1)},
		{"stopping the pool evicts nothing", Options{}, []step{acquire("a", "one"), release("a"), stopPool()}, stats(0, 0, 1, 0)},
		{"nothing yet", Options{}, nil, map[string]ProviderStats{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts)
			h.run(tc.steps)
			if diff := cmp.Diff(tc.want, h.pool.Stats()); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
		})
	}
}
