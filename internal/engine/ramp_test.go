package engine

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestOpensOnTick: a tick lets one more run start when half a core was idle, or when
// the limit has held half a second however busy the CPU.
func TestOpensOnTick(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle float64
		held time.Duration
		want bool
	}{
		{"busy, just opened", 0, 0, false},
		{"a little idle", 0.4, 300 * time.Millisecond, false},
		{"half a core idle", 0.5, 0, true},
		{"a core idle", 1.2, 100 * time.Millisecond, true},
		{"busy for half a second", 0, rampMaxHold, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := opensOnTick(tc.idle, tc.held); got != tc.want {
				t.Errorf("opensOnTick(%v, %s) = %t, want %t", tc.idle, tc.held, got, tc.want)
			}
		})
	}
}

// fixedMeter reports the same idle CPU every time.
type fixedMeter struct{ idle atomic.Value }

func (m *fixedMeter) IdleCores() float64 {
	v, _ := m.idle.Load().(float64)
	return v
}

// started enters r in a goroutine and reports on the channel once the run may start.
func started(ctx context.Context, r *ramp) chan error {
	c := make(chan error, 1)
	go func() { c <- r.enter(ctx, time.Time{}) }()
	return c
}

// waits fails t when the run of c starts within d.
func waits(t *testing.T, c chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-c:
		t.Fatalf("%s started (err %v), want it waiting", what, err)
	case <-time.After(d):
	}
}

// starts fails t unless the run of c starts within d.
func starts(t *testing.T, c chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-c:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("%s still waits after %s", what, d)
	}
}

// TestRampBurst: on a busy CPU the first run of a burst starts alone; each run that
// ends lets two take its place; with none left the ramp starts over at one.
func TestRampBurst(t *testing.T) {
	ctx := t.Context()
	r := newRamp(10, &fixedMeter{})
	starts(t, started(ctx, r), time.Second, "the first run")
	second, third := started(ctx, r), started(ctx, r)
	waits(t, second, 300*time.Millisecond, "the second run beside the first on a busy CPU")
	r.leave()
	starts(t, second, time.Second, "a run after the first ended")
	starts(t, third, time.Second, "the run the first's end opened")
	if limit, _, _ := r.counts(); limit != 2 {
		t.Errorf("limit %d after one run ended with two waiting, want 2", limit)
	}
	r.leave()
	r.leave()
	if limit, _, _ := r.counts(); limit != 1 {
		t.Errorf("limit %d with nothing running or waiting, want 1 (start over)", limit)
	}
}

// TestRampOrder: runs waiting start oldest order first, whatever order they came in; a
// run without an order after every other; equal orders by arrival.
func TestRampOrder(t *testing.T) {
	ctx := t.Context()
	r := newRamp(1, &fixedMeter{})
	if err := r.enter(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var got []string
	runs := []struct {
		name  string
		order time.Time
	}{
		{"unordered", time.Time{}},
		{"made third", t0.Add(2 * time.Second)},
		{"made first", t0},
		{"made second", t0.Add(time.Second)},
		{"made second too", t0.Add(time.Second)},
	}
	done := make(chan struct{})
	for i, run := range runs {
		go func() {
			if err := r.enter(ctx, run.order); err != nil {
				t.Error(err)
			}
			mu.Lock()
			got = append(got, run.name)
			mu.Unlock()
			r.leave()
			done <- struct{}{}
		}()
		for deadline := time.Now().Add(time.Second); ; runtime.Gosched() { // each waits before the next comes
			if _, _, waiting := r.counts(); waiting == i+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never waited", run.name)
			}
		}
	}
	r.leave()
	for range runs {
		<-done
	}
	want := []string{"made first", "made second", "made second too", "made third", "unordered"}
	if !slices.Equal(got, want) {
		t.Errorf("runs started %q, want %q", got, want)
	}
}

// TestRampRoom: idle CPU opens the next place within a tick or two; a busy one after
// rampMaxHold at most; a cancelled wait gives up.
func TestRampRoom(t *testing.T) {
	ctx := t.Context()
	meter := &fixedMeter{}
	meter.idle.Store(1.0)
	r := newRamp(3, meter)
	starts(t, started(ctx, r), time.Second, "the first run")
	starts(t, started(ctx, r), 5*rampTick, "a run beside it with a core idle")

	meter.idle.Store(0.0)
	third := started(ctx, r)
	waits(t, third, rampMaxHold/2, "a third run on a busy CPU")
	starts(t, third, rampMaxHold+5*rampTick, "a third run after the limit held half a second")

	cancelled, cancel := context.WithCancel(ctx)
	fourth := started(cancelled, r)
	waits(t, fourth, 2*rampTick, "a fourth run beyond max")
	cancel()
	select {
	case err := <-fourth:
		if err == nil {
			t.Fatal("a cancelled wait started its run")
		}
	case <-time.After(time.Second):
		t.Fatal("a cancelled wait still waits")
	}
	if _, running, waiting := r.counts(); waiting != 0 || running != 3 {
		t.Errorf("waiting %d, running %d after the cancel; want 0 and 3", waiting, running)
	}
}

// TestNilRamp: an engine without a ramp starts every run at once.
func TestNilRamp(t *testing.T) {
	var r *ramp
	if err := r.enter(t.Context(), time.Time{}); err != nil {
		t.Fatal(err)
	}
	r.leave()
}

// counts are r's limit, runs running and runs waiting.
func (r *ramp) counts() (limit, running, waiting int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.limit, r.running, len(r.waiters)
}

// TestMeters: a meter reads nothing idle at first; the machine's then a share of its
// cores, a container's its limit less what it used.
func TestMeters(t *testing.T) {
	m := MachineCPU()
	if got := m.IdleCores(); got != 0 {
		t.Errorf("first reading %v, want 0", got)
	}
	time.Sleep(50 * time.Millisecond)
	if got := m.IdleCores(); got < 0 || got > float64(runtime.NumCPU())+0.5 {
		t.Errorf("idle %v cores on a machine of %d", got, runtime.NumCPU())
	}
	used := 0.0
	c := ContainerCPU(2, func() (float64, bool) { return used, true })
	c.IdleCores()
	time.Sleep(100 * time.Millisecond)
	if got := c.IdleCores(); got < 1.9 {
		t.Errorf("idle %v cores of 2 with none used, want 2", got)
	}
	used += 10 // far more than the limit since: none idle
	time.Sleep(10 * time.Millisecond)
	if got := c.IdleCores(); got != 0 {
		t.Errorf("idle %v cores with the limit used, want 0", got)
	}
	broken := ContainerCPU(2, func() (float64, bool) { return 0, false })
	broken.IdleCores()
	if got := broken.IdleCores(); got != 0 {
		t.Errorf("idle %v cores from a counter that cannot be read, want 0", got)
	}
}
