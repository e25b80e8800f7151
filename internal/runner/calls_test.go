package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"

	"terraplane.io/terraplane/internal/engine"
)

// TestCallsAreTimed: every run sent to a runner is told once it ends, with its verb,
// its error, and how long the caller waited against how long the runner worked on it
// (the rest is the hop); a runner that does not answer is told as unreachable, with no
// runner time.
func TestCallsAreTimed(t *testing.T) {
	runs := &fakeRuns{delay: 80 * time.Millisecond}
	c, _ := serve(t, runs, "the-token")
	var mu sync.Mutex
	var calls []Call
	c.OnCall = func(call Call) { mu.Lock(); calls = append(calls, call); mu.Unlock() }
	ctx := context.Background()
	ws := engine.Workspace{ID: "u1", BackendConfig: map[string]string{"namespace": "ns"}}
	if _, err := c.Plan(ctx, ws, engine.PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	runs.err = errors.New("Error: Invalid value for input variable")
	if _, err := c.Outputs(ctx, ws); err == nil {
		t.Fatal("outputs: want the run's error")
	}
	gone := NewClient(filepath.Join(t.TempDir(), "no.sock"), "the-token", nil)
	gone.OnCall = c.OnCall
	if _, err := gone.Plan(ctx, ws, engine.PlanOptions{}); err == nil {
		t.Fatal("plan on no runner: want an error")
	}
	type seen struct {
		Verb              string
		Failed, Unreached bool
		RunnerTimed       bool // the runner's time covers its run
		HopWithinWall     bool
	}
	var got []seen
	for _, call := range calls {
		got = append(got, seen{call.Verb, call.Err != nil, call.Unreachable(), call.Runner >= runs.delay,
			call.Hop() >= 0 && call.Hop() <= call.Wall && call.Wall >= call.Runner})
	}
	want := []seen{{"plan", false, false, true, true}, {"outputs", true, false, true, true}, {"plan", true, true, false, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if calls[0].Hop() > time.Second {
		t.Errorf("a run on a local socket took a hop of %s", calls[0].Hop())
	}
}

// TestInfo: a runner says where it serves its metrics, to a caller with its token only.
func TestInfo(t *testing.T) {
	c, _ := serve(t, &fakeRuns{}, "the-token")
	info, err := c.Info(context.Background())
	if err != nil || info.MetricsAddress != "127.0.0.1:9100" {
		t.Fatalf("info: %+v, %v", info, err)
	}
	bad, _ := serve(t, &fakeRuns{}, "a-guess")
	if _, err := bad.Info(context.Background()); err == nil {
		t.Fatal("info with a wrong token: want it refused")
	}
}

// TestTargets: the metrics targets file lists each running runner's endpoint with its
// pool, ordered by pool, and drops a runner that stopped.
func TestTargets(t *testing.T) {
	file := filepath.Join(t.TempDir(), "runners.json")
	p := &Processes{MetricsTargets: file, Log: logr.Discard()}
	read := func() []Target {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var out []Target
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return out
	}
	target := func(addr, pool string) Target {
		return Target{Targets: []string{addr}, Labels: map[string]string{"pool": pool}}
	}
	p.publish(PoolRef{Namespace: "team-b", Name: "default"}, "127.0.0.1:4002")
	p.publish(PoolRef{Namespace: "team-a", Name: "gold"}, "127.0.0.1:4001")
	want := []Target{target("127.0.0.1:4001", "team-a/gold"), target("127.0.0.1:4002", "team-b/default")}
	if diff := cmp.Diff(want, read()); diff != "" {
		t.Errorf("two runners (-want +got):\n%s", diff)
	}
	p.publish(PoolRef{Namespace: "team-a", Name: "gold"}, "")
	if diff := cmp.Diff(want[1:], read()); diff != "" {
		t.Errorf("one stopped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[1:], p.Targets()); diff != "" {
		t.Errorf("Targets (-want +got):\n%s", diff)
	}
}
