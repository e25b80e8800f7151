package engine

import (
	"context"
	"slices"
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
// the CPU idle and open the rest at once. Runs waiting start oldest resource first
// (Workspace.Order), then in the order they came, each handed its place in turn.
type ramp struct {
	max   int
	meter CPUMeter

	mu       sync.Mutex
	limit    int
	running  int
	waiters  []*rampWaiter // oldest first
	seq      uint64        // arrivals so far, breaking ties of order
	opened   time.Time     // when limit last grew
	watching bool          // a goroutine ticks while runs wait
}

// rampWaiter is a run waiting to start: started is closed once it may.
type rampWaiter struct {
	order   time.Time
	seq     uint64
	started chan struct{}
}

// before reports whether w starts before o: the older order first, a zero order after
// every other, and arrival breaking ties.
func (w *rampWaiter) before(o *rampWaiter) bool {
	switch {
	case w.order.IsZero() != o.order.IsZero():
		return o.order.IsZero()
	case !w.order.Equal(o.order):
		return w.order.Before(o.order)
	}
	return w.seq < o.seq
}

// newRamp is a ramp up to max runs at once, reading the CPU with meter.
func newRamp(max int, meter CPUMeter) *ramp {
	return &ramp{max: max, meter: meter, limit: 1}
}

// enter waits until a run may start and counts it running; leave must follow. Among the
// runs waiting, the one with the oldest order starts first. A nil ramp lets every run
// start at once.
func (r *ramp) enter(ctx context.Context, order time.Time) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	if r.running < r.limit && len(r.waiters) == 0 {
		r.running++
		r.mu.Unlock()
		return nil
	}
	r.seq++
	w := &rampWaiter{order: order, seq: r.seq, started: make(chan struct{})}
	i := slices.IndexFunc(r.waiters, w.before) // the first it goes before; at most max wait
	if i < 0 {
		i = len(r.waiters)
	}
	r.waiters = slices.Insert(r.waiters, i, w)
	if !r.watching {
		r.watching = true
		r.opened = time.Now()
		go r.watch()
	}
	r.admit()
	r.mu.Unlock()
	select {
	case <-w.started:
		return nil
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-w.started: // started as the wait ended: give the place back
		r.free(false)
	default:
		r.waiters = slices.DeleteFunc(r.waiters, func(o *rampWaiter) bool { return o == w })
	}
	return ctx.Err()
}

// admit starts the oldest runs waiting while the limit has room. r.mu is held.
func (r *ramp) admit() {
	for r.running < r.limit && len(r.waiters) > 0 {
		w := r.waiters[0]
		r.waiters = r.waiters[1:]
		r.running++
		close(w.started)
	}
}

// leave counts a run ended: one waiting may take its place and one more may start
// beside the rest; with none running and none waiting, the ramp starts over.
func (r *ramp) leave() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.free(true)
}

// free counts a place given up: with none running and none waiting the ramp starts
// over; otherwise, when a run ended (ended) with others waiting, one more may start
// beside the rest; then the oldest waiting take the places. r.mu is held.
func (r *ramp) free(ended bool) {
	r.running--
	switch {
	case r.running == 0 && len(r.waiters) == 0:
		r.limit = 1
	case ended && len(r.waiters) > 0:
		r.open(time.Now())
	}
	r.admit()
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
		if len(r.waiters) == 0 {
			r.watching = false
			r.mu.Unlock()
			return
		}
		if opensOnTick(idle, now.Sub(r.opened)) && r.open(now) {
			r.admit()
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
