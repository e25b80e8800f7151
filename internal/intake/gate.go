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
	mu    sync.Mutex
	seq   uint64
	ns    map[string]*space
}

// space is one namespace's places and queue.
type space struct {
	making  map[types.NamespacedName]bool
	waiting []*waiter // in turn order
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

// New returns a gate whose limit, read each time a claim asks, is the number of new
// resources that may wait for their first apply at once in one namespace; a limit
// below 1 takes every claim in.
func New(limit func() int) *Gate {
	return &Gate{limit: limit, ns: map[string]*space{}}
}

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
	i := slices.IndexFunc(sp.waiting, func(w *waiter) bool { return w.key == key })
	if i < 0 {
		g.seq++
		w := &waiter{key: key, made: made, seq: g.seq, wake: wake}
		i = slices.IndexFunc(sp.waiting, func(o *waiter) bool { return w.before(o) })
		if i < 0 {
			i = len(sp.waiting)
		}
		sp.waiting = slices.Insert(sp.waiting, i, w)
	} else {
		sp.waiting[i].wake = wake
	}
	if i >= limit-len(sp.making) {
		return false
	}
	sp.waiting = slices.Delete(sp.waiting, i, i+1)
	sp.making[key] = true
	return true
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
	i := slices.IndexFunc(sp.waiting, func(w *waiter) bool { return w.key == key })
	return i >= 0 && i >= limit-len(sp.making)
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
	sp.waiting = slices.DeleteFunc(sp.waiting, func(w *waiter) bool { return w.key == key })
	var wake []func()
	if len(sp.making)+len(sp.waiting) < held {
		free := g.limit() - len(sp.making)
		for _, w := range sp.waiting[:max(0, min(free, len(sp.waiting)))] {
			wake = append(wake, w.wake)
		}
	}
	if len(sp.making) == 0 && len(sp.waiting) == 0 {
		delete(g.ns, key.Namespace)
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

// space returns namespace's places and queue, made when first needed. The caller holds g.mu.
func (g *Gate) space(namespace string) *space {
	sp, ok := g.ns[namespace]
	if !ok {
		sp = &space{making: map[types.NamespacedName]bool{}}
		g.ns[namespace] = sp
	}
	return sp
}
