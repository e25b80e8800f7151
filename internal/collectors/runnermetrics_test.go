package collectors

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/runner"
)

// hops is how many hops runnerHopSeconds recorded for pool and verb, and their sum.
func hops(t *testing.T, pool, verb string) (uint64, float64) {
	t.Helper()
	var m dto.Metric
	if err := runnerHopSeconds.WithLabelValues(pool, verb).(prometheus.Histogram).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// count is a counter's value.
func count(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestObserveCall: a run sent to a pool counts by pool, verb and result (success, error,
// unreachable), and its hop (the wait less the runner's time) is timed unless the runner
// did not answer.
func TestObserveCall(t *testing.T) {
	var gone runner.Call
	c := runner.NewClient(filepath.Join(t.TempDir(), "no.sock"), "t", nil)
	c.OnCall = func(call runner.Call) { gone = call }
	if _, err := c.Plan(context.Background(), engine.Workspace{}, engine.PlanOptions{}); err == nil {
		t.Fatal("want an unreachable runner")
	}
	pool := runner.PoolRef{Namespace: "team-a", Name: "gold"}
	for name, tc := range map[string]struct {
		call    runner.Call
		result  string
		hop     float64 // seconds; -1: none recorded
		counted float64
	}{
		"a run that worked": {runner.Call{Verb: "apply-plan", Wall: 1500 * time.Millisecond, Runner: 1497 * time.Millisecond}, "success", 0.003, 1},
		"a run that failed": {runner.Call{Verb: "create", Wall: 2 * time.Second, Runner: 1990 * time.Millisecond, Err: errors.New("Error: denied")}, "error", 0.01, 1},
		"no runner":         {gone, "unreachable", -1, 1},
	} {
		t.Run(name, func(t *testing.T) {
			counter := runnerRunsTotal.WithLabelValues(pool.String(), tc.call.Verb, tc.result)
			before := count(t, counter)
			n, sum := hops(t, pool.String(), tc.call.Verb)
			ObserveCall(pool, tc.call)
			n2, sum2 := hops(t, pool.String(), tc.call.Verb)
			got := []float64{count(t, counter) - before, float64(n2 - n)}
			want := []float64{tc.counted, 1}
			if tc.hop < 0 {
				want[1] = 0
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("runs, hops recorded (-want +got):\n%s", diff)
			}
			if tc.hop >= 0 && (sum2-sum < tc.hop-1e-9 || sum2-sum > tc.hop+1e-9) {
				t.Errorf("hop %gs, want %gs", sum2-sum, tc.hop)
			}
		})
	}
}
