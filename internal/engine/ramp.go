package engine

import (
	"context"
	"sync"
	"time"
)

// Ramp timings: how often a ramp waiting for room reads the CPU, and the longest it
// keeps its limit while runs wait.
const (
	rampTick    = 100 * time.Millisecond
	rampMaxHold = 500 * time.Millisecond
	// rampRoom is the idle CPU, in cores, that lets one more run start beside the others.
	rampRoom = 0.5
)

// CPUMeter reads how much CPU nobody used.
type CPUMeter interface {
	// IdleCores is the CPU, in cores, left idle since the previous call (0 on the first).
	IdleCores() float64
}

// ramp lets a burst of runs start one at a time: when nothing runs, one run may; each
// run that ends lets one more start beside the rest (as TCP's slow start does), and so
// does a tick that finds half a core idle or half a second without an opening, up to max.
// The first run of a burst so has the machine to itself, and is done as fast as a run
// alone, while the others are still being taken in; runs waiting on the network leave
// the CPU idle and open the rest at once.
type ramp struct {
	max   int
	meter CPUMeter

	mu       sync.Mutex
	limit    int
	running  int
	waiting  int
	opened   time.Time     // when limit last grew
	changed  chan struct{} // closed, and replaced, when limit grows or a run ends
	watching bool          // a goroutine ticks while runs wait
}

// newRamp is a ramp up to max runs at once, reading the CPU with meter.
func newRamp(max int, meter CPUMeter) *ramp {
	return &ramp{max: max, meter: meter, limit: 1, changed: make(chan struct{})}
}

// enter waits until a run may start and counts it running; leave must follow. A nil
// ramp lets every run start at once.
func (r *ramp) enter(ctx context.Context) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	for r.running >= r.limit {
		r.waiting++
		if !r.watching {
			r.watching = true
			r.opened = time.Now()
			go r.watch()
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			r.mu.Lock()
			r.waiting--
			r.mu.Unlock()
			return ctx.Err()
		}
		r.mu.Lock()
		r.waiting--
	}
	r.running++
	r.mu.Unlock()
	return nil
}

// leave counts a run ended: one waiting may take its place and one more may start
// beside the rest; with none running and none waiting, the ramp starts over.
func (r *ramp) leave() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running--
	switch {
	case r.running == 0 && r.waiting == 0:
		r.limit = 1
	case r.waiting > 0:
		r.open(time.Now())
	}
	r.wake()
}

// watch ticks while runs wait, opening one more place when the CPU has room or the
// limit has held for rampMaxHold.
func (r *ramp) watch() {
	t := time.NewTicker(rampTick)
	defer t.Stop()
	r.meter.IdleCores() // the reading the first tick measures from
	for now := range t.C {
		idle := r.meter.IdleCores()
		r.mu.Lock()
		if r.waiting == 0 {
			r.watching = false
			r.mu.Unlock()
			return
		}
		if opensOnTick(idle, now.Sub(r.opened)) && r.open(now) {
			r.wake()
		}
		r.mu.Unlock()
	}
}

// opensOnTick is the rule of a tick: one more run may start when half a core was left
// idle, or when the limit has held rampMaxHold however busy the CPU.
func opensOnTick(idleCores float64, held time.Duration) bool {
	return idleCores >= rampRoom || held >= rampMaxHold
}

// open raises the limit by one, to max at most; it reports whether it did.
func (r *ramp) open(now time.Time) bool {
	if r.limit >= r.max {
		return false
	}
	r.limit++
	r.opened = now
	return true
}

// wake tells the waiting that the limit or the runs changed.
func (r *ramp) wake() {
	close(r.changed)
	r.changed = make(chan struct{})
}
