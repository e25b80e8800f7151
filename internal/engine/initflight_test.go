package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestInitFlights: one caller per module leads its init; callers for the same module
// wait for it to end, those for another module do not, and a waiter whose context ends
// stops waiting.
func TestInitFlights(t *testing.T) {
	type call struct {
		module string
		cancel bool // its context ends while it would wait
	}
	cases := []struct {
		name  string
		first string // the module whose init runs
		calls []call
		want  []string // per call: "lead", "waited" or "error"
	}{{
		name:  "the same module waits for the running init",
		first: "m",
		calls: []call{{"m", false}, {"m", false}},
		want:  []string{"waited", "waited"},
	}, {
		name:  "another module leads its own",
		first: "m",
		calls: []call{{"n", false}},
		want:  []string{"lead"},
	}, {
		name:  "a waiter whose context ends stops waiting",
		first: "m",
		calls: []call{{"m", true}},
		want:  []string{"error"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f initFlights
			done, err := f.lead(context.Background(), tc.first)
			if err != nil || done == nil {
				t.Fatalf("the first caller did not lead: %v", err)
			}
			got := make([]string, len(tc.calls))
			var wg sync.WaitGroup
			for i, c := range tc.calls {
				ctx, cancel := context.WithCancel(context.Background())
				if c.cancel {
					cancel()
				}
				wg.Go(func() {
					defer cancel()
					d, err := f.lead(ctx, c.module)
					switch {
					case err != nil:
						got[i] = "error"
					case d != nil:
						got[i] = "lead"
						d()
					default:
						got[i] = "waited"
					}
				})
			}
			time.Sleep(50 * time.Millisecond) // the waiters are waiting
			done()
			wg.Wait()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if d, err := f.lead(context.Background(), tc.first); err != nil || d == nil {
				t.Errorf("after the init ended, the next caller did not lead: %v", err)
			}
		})
	}
}

// TestConcurrentWorkspacesInitOnce runs the real terraform: workspaces of one module
// created at the same time run one init between them; the others copy it.
func TestConcurrentWorkspacesInitOnce(t *testing.T) {
	const workspaces = 4
	e, calls := countingEngine(t, workspaces)
	states := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, workspaces)
	for i := range workspaces {
		id := fmt.Sprintf("w%d", i)
		ws := Workspace{ID: id, Files: renderLocalBackend(t, id), BackendConfig: map[string]string{"path": states + "/" + id + ".tfstate"}}
		wg.Go(func() { _, errs[i] = e.Create(context.Background(), ws) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Count(strings.Join(calls(), " "), "init/"); got != 1 {
		t.Errorf("terraform ran init %d times for %d workspaces of one module, want once: %v", got, workspaces, calls())
	}
	if e.InitsShared() != workspaces-1 {
		t.Errorf("InitsShared = %d, want %d", e.InitsShared(), workspaces-1)
	}
}
