package intake

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Gate holds, per namespace, the claims whose new resource has not reported yet and the
// claims waiting for a place. A nil *Gate takes every claim in at once.
type Gate struct {
	limit func() int
	// now reads the clock, and afterFunc calls f after d: time's, but for tests.
	now       func() time.Time
	afterFunc func(d time.Duration, f func()) func() bool
	mu        sync.Mutex
	seq       uint64
	ns        map[string]*space
}

// A burst opens a namespace's places a few at a time, as TCP's slow start opens its
// window: slowStartPlaces at once, twice as many each slowStartStep, up to the limit.
// The first claims' resources then reach the engine while the API server takes few
// writes besides the burst's creates, and a burst of slow applies (a cloud's) still has
// every place open within a couple of seconds, long before its first apply ends.
const (
	slowStartPlaces = 2
	slowStartStep   = 500 * time.Millisecond
)

// window is how many of limit's places are open since after a burst began (slow
// start); a limit below 1 opens every place.
func window(limit int, since time.Duration) int {
	if limit < 1 {
		return limit
	}
	open := slowStartPlaces
	for step := slowStartStep; step <= since && open < limit; step += slowStartStep {
		open *= 2
	}
	return min(open, limit)
}

// space is one namespace's places and queue. A claim's turn is found by binary search
// and its place in the queue by key, so that a namespace with thousands of claims waiting
// answers each claim in time that does not grow with the queue.
type space struct {
	making  map[types.NamespacedName]bool
	waiting []*waiter // in turn order
	queued  map[types.NamespacedName]*waiter
	// began is when the namespace's burst began (its slow start's clock); widen, when
	// set, wakes the claims whose turn the next widening of the window brings.
	began time.Time
	widen func() bool
}

// position is w's index in the queue; w is queued.
func (sp *space) position(w *waiter) int {
	i, _ := slices.BinarySearchFunc(sp.waiting, w, compareTurns)
	return i
}

// enqueue puts w in the queue at its turn.
func (sp *space) enqueue(w *waiter) {
	sp.waiting = slices.Insert(sp.waiting, sp.position(w), w)
	sp.queued[w.key] = w
}

// dequeue takes w out of the queue.
func (sp *space) dequeue(w *waiter) {
	i := sp.position(w)
	sp.waiting = slices.Delete(sp.waiting, i, i+1)
	delete(sp.queued, w.key)
}

// turnsCome is the wakes of the claims at the head of the queue that the open places
// not yet in use would take in, but for those asking already.
func (sp *space) turnsCome(open int, asking ...types.NamespacedName) []func() {
	free := max(0, min(open-len(sp.making), len(sp.waiting)))
	wake := make([]func(), 0, free)
	for _, w := range sp.waiting[:free] {
		if !slices.Contains(asking, w.key) {
			wake = append(wake, w.wake)
		}
	}
	return wake
}

// waiter is a claim waiting for a place.
type waiter struct {
	key  types.NamespacedName
	made time.Time
	seq  uint64
	wake func()
}

// before says whether w's turn comes before o's: the claim made first, then the one
// that came first (creation times are kept to the second).
func (w *waiter) before(o *waiter) bool {
	if !w.made.Equal(o.made) {
		return w.made.Before(o.made)
	}
	return w.seq < o.seq
}

// compareTurns orders waiters by turn, for the queue's binary search.
func compareTurns(w, o *waiter) int {
	switch {
	case w == o:
		return 0
	case w.before(o):
		return -1
	default:
		return 1
	}
}

// New returns a gate whose limit, read each time a claim asks, is the number of new
// resources that may wait for their first apply at once in one namespace; a limit
// below 1 takes every claim in.
func New(limit func() int) *Gate {
	return &Gate{limit: limit, now: time.Now, afterFunc: afterFunc, ns: map[string]*space{}}
}

// afterFunc is time.AfterFunc, its timer's Stop returned.
func afterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// Admit takes the claim key, made at made, in when its namespace has a free place and
// no claim waits before it: its new resource then counts until Done. Otherwise the
// claim waits its turn, Admit reports false, and wake is called when its turn may have
// come. A claim taken in already is taken in again.
func (g *Gate) Admit(key types.NamespacedName, made time.Time, wake func()) bool {
	if g == nil {
		return true
	}
	limit := g.limit()
	if limit < 1 {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	sp := g.space(key.Namespace)
	if sp.making[key] {
		return true
	}
	w, ok := sp.queued[key]
	if !ok {
		g.seq++
		w = &waiter{key: key, made: made, seq: g.seq, wake: wake}
		sp.enqueue(w)
	} else {
		w.wake = wake
	}
	if sp.position(w) >= g.open(sp, limit)-len(sp.making) {
		g.widenLater(key.Namespace, sp, limit)
		return false
	}
	sp.dequeue(w)
	sp.making[key] = true
	return true
}

// Claimant is a claim that waits for a new resource: its key, when it was made, and
// what wakes it when its turn may have come.
type Claimant struct {
	Key  types.NamespacedName
	Made time.Time
	Wake func()
}

// Begins reports whether a claim in namespace would begin a burst there: the gate holds
// nothing for the namespace. Before such a claim asks, the claims that already wait
// there are put in line (LineUp), so that they go in the order they were made rather
// than in the order they are looked at (after a restart, or once their class is Ready).
func (g *Gate) Begins(namespace string) bool {
	if g == nil || g.limit() < 1 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.ns[namespace]
	return !ok
}

// LineUp puts claims in line in the namespace of asker, the claim about to ask, each at
// its turn by the time it was made; a claim taken in or in line already keeps its place.
// The claims whose turn has come are woken, but for asker.
func (g *Gate) LineUp(asker types.NamespacedName, claims []Claimant) {
	if g == nil || len(claims) == 0 {
		return
	}
	limit := g.limit()
	if limit < 1 {
		return
	}
	namespace := asker.Namespace
	g.mu.Lock()
	sp := g.space(namespace)
	for _, c := range claims {
		if c.Key.Namespace != namespace || sp.making[c.Key] || sp.queued[c.Key] != nil {
			continue
		}
		g.seq++
		w := &waiter{key: c.Key, made: c.Made, seq: g.seq, wake: c.Wake}
		sp.waiting = append(sp.waiting, w)
		sp.queued[c.Key] = w
	}
	slices.SortFunc(sp.waiting, compareTurns)
	wake := sp.turnsCome(g.open(sp, limit), asker)
	switch {
	case len(sp.making) == 0 && len(sp.waiting) == 0:
		g.forget(namespace, sp)
	case len(sp.waiting) > len(wake):
		g.widenLater(namespace, sp, limit)
	}
	g.mu.Unlock()
	for _, f := range wake {
		f()
	}
}

// Waits reports whether the claim key waits its turn and the turn has not come: asked
// again, such a claim can be answered before anything is read for it.
func (g *Gate) Waits(key types.NamespacedName) bool {
	if g == nil {
		return false
	}
	limit := g.limit()
	if limit < 1 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	sp, ok := g.ns[key.Namespace]
	if !ok {
		return false
	}
	w, ok := sp.queued[key]
	return ok && sp.position(w) >= g.open(sp, limit)-len(sp.making)
}

// Done ends what the gate holds for the claim key: its place (its resource reported,
// failed to be made, or the claim is gone) or its turn. The claims whose turn may have
// come are woken.
func (g *Gate) Done(key types.NamespacedName) {
	if g == nil {
		return
	}
	g.mu.Lock()
	sp, ok := g.ns[key.Namespace]
	if !ok {
		g.mu.Unlock()
		return
	}
	held := len(sp.making) + len(sp.waiting)
	delete(sp.making, key)
	if w, ok := sp.queued[key]; ok {
		sp.dequeue(w)
	}
	var wake []func()
	if len(sp.making)+len(sp.waiting) < held {
		wake = sp.turnsCome(g.open(sp, g.limit()))
	}
	if len(sp.making) == 0 && len(sp.waiting) == 0 {
		g.forget(key.Namespace, sp)
	}
	g.mu.Unlock()
	for _, f := range wake {
		f()
	}
}

// Limit is the number of places per namespace now; below 1 means no limit.
func (g *Gate) Limit() int {
	if g == nil {
		return 0
	}
	return g.limit()
}

// space returns namespace's places and queue, made when first needed: a burst begins.
// The caller holds g.mu.
func (g *Gate) space(namespace string) *space {
	sp, ok := g.ns[namespace]
	if !ok {
		sp = &space{making: map[types.NamespacedName]bool{}, queued: map[types.NamespacedName]*waiter{}, began: g.now()}
		g.ns[namespace] = sp
	}
	return sp
}

// forget drops namespace's empty space: its next claim begins a burst again. The caller
// holds g.mu.
func (g *Gate) forget(namespace string, sp *space) {
	if sp.widen != nil {
		sp.widen()
	}
	delete(g.ns, namespace)
}

// open is how many of limit's places sp has open now. The caller holds g.mu.
func (g *Gate) open(sp *space, limit int) int {
	return window(limit, g.now().Sub(sp.began))
}

// widenLater wakes, when sp's window next widens, the claims whose turn that brings; a
// window open to the limit waits for places to free instead. The caller holds g.mu.
func (g *Gate) widenLater(namespace string, sp *space, limit int) {
	since := g.now().Sub(sp.began)
	if sp.widen != nil || window(limit, since) >= limit {
		return
	}
	next := (since/slowStartStep + 1) * slowStartStep
	sp.widen = g.afterFunc(next-since, func() {
		g.mu.Lock()
		if g.ns[namespace] != sp {
			g.mu.Unlock()
			return
		}
		sp.widen = nil
		limit := g.limit()
		wake := sp.turnsCome(g.open(sp, limit))
		if len(sp.waiting) > len(wake) {
			g.widenLater(namespace, sp, limit)
		}
		g.mu.Unlock()
		for _, f := range wake {
			f()
		}
	})
}
