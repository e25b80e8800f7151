package intake

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// recorder records which claims were woken.
type recorder struct{ woken []string }

func (r *recorder) waker(name string) func() {
	return func() { r.woken = append(r.woken, name) }
}

// expect checks that the claims woken so far are want, in that order.
func (r *recorder) expect(t *testing.T, want ...string) {
	t.Helper()
	if !slices.Equal(r.woken, want) {
		t.Fatalf("woken %v, want %v", r.woken, want)
	}
}

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

// fakeClock is a test's clock: it moves only when told, running the timers that come due.
type fakeClock struct {
	t      time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) afterFunc(d time.Duration, f func()) func() bool {
	tm := &fakeTimer{at: c.t.Add(d), f: f}
	c.timers = append(c.timers, tm)
	return func() bool { was := !tm.stopped; tm.stopped = true; return was }
}

// advance moves the clock by d, running each timer due on the way, in time order.
func (c *fakeClock) advance(d time.Duration) {
	end := c.t.Add(d)
	for {
		var next *fakeTimer
		for _, tm := range c.timers {
			if !tm.stopped && !tm.at.After(end) && (next == nil || tm.at.Before(next.at)) {
				next = tm
			}
		}
		if next == nil {
			c.t = end
			return
		}
		c.t, next.stopped = next.at, true
		next.f()
	}
}

// begunLongAgo opens every place of namespace's burst, as if it began long ago.
func begunLongAgo(g *Gate, namespace string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.space(namespace).began = g.now().Add(-time.Hour)
}

// newGate is a gate on a fake clock.
func newGate(limit func() int) (*Gate, *fakeClock) {
	c := &fakeClock{t: t0}
	g := New(limit)
	g.now, g.afterFunc = c.now, c.afterFunc
	return g, c
}

func TestWindow(t *testing.T) {
	for _, tc := range []struct {
		limit int
		since time.Duration
		want  int
	}{
		{limit: 20, since: 0, want: 2},
		{limit: 20, since: 499 * time.Millisecond, want: 2},
		{limit: 20, since: 500 * time.Millisecond, want: 4},
		{limit: 20, since: time.Second, want: 8},
		{limit: 20, since: 1500 * time.Millisecond, want: 16},
		{limit: 20, since: 2 * time.Second, want: 20},
		{limit: 20, since: time.Hour, want: 20},
		{limit: 1, since: 0, want: 1},
		{limit: 3, since: 500 * time.Millisecond, want: 3},
		{limit: 0, since: 0, want: 0},
	} {
		if got := window(tc.limit, tc.since); got != tc.want {
			t.Errorf("window(%d, %s) = %d, want %d", tc.limit, tc.since, got, tc.want)
		}
	}
}

func TestABurstOpensItsPlacesAFewAtATime(t *testing.T) {
	g, clock := newGate(func() int { return 20 })
	var r recorder
	admitted := 0
	ask := func(name string) {
		if g.Admit(key("a", name), t0, r.waker(name)) {
			admitted++
		}
	}
	for i := range 30 {
		ask(fmt.Sprint(i))
	}
	for _, step := range []struct {
		after time.Duration
		woken int // by the window's widening, in this step
		want  int // taken in, in all
	}{
		{after: 0, woken: 0, want: 2},
		{after: 499 * time.Millisecond, woken: 0, want: 2},
		{after: time.Millisecond, woken: 2, want: 4},
		{after: 500 * time.Millisecond, woken: 4, want: 8},
		{after: 500 * time.Millisecond, woken: 8, want: 16},
		{after: 500 * time.Millisecond, woken: 4, want: 20},
		{after: time.Hour, woken: 0, want: 20}, // open to the limit: places free as resources report
	} {
		r.woken = nil
		clock.advance(step.after)
		if len(r.woken) != step.woken {
			t.Fatalf("at %s: %d claims woken, want %d", clock.t.Sub(t0), len(r.woken), step.woken)
		}
		for _, name := range r.woken {
			ask(name)
		}
		if admitted != step.want {
			t.Fatalf("at %s: %d claims taken in, want %d", clock.t.Sub(t0), admitted, step.want)
		}
	}
	// Once the namespace empties, its next claims begin a burst of their own.
	for i := range 30 {
		g.Done(key("a", fmt.Sprint(i)))
	}
	admitted = 0
	for i := range 3 {
		ask(fmt.Sprint("next", i))
	}
	if admitted != 2 {
		t.Fatalf("a new burst took %d claims in at once, want 2", admitted)
	}
}

func TestAdmitUpToTheLimitPerNamespace(t *testing.T) {
	g := New(func() int { return 2 })
	var r recorder
	for i, tc := range []struct {
		key  types.NamespacedName
		want bool
	}{
		{key("a", "c1"), true},
		{key("a", "c2"), true},
		{key("a", "c3"), false},
		{key("b", "c1"), true}, // another namespace has places of its own
		{key("a", "c1"), true}, // taken in already
		{key("a", "c3"), false},
	} {
		if got := g.Admit(tc.key, t0.Add(time.Duration(i)*time.Second), r.waker(tc.key.String())); got != tc.want {
			t.Errorf("step %d: Admit(%s) = %v, want %v", i, tc.key, got, tc.want)
		}
	}
}

func TestTurnsGoOldestFirst(t *testing.T) {
	g := New(func() int { return 1 })
	var r recorder
	if !g.Admit(key("a", "first"), t0, r.waker("first")) {
		t.Fatal("the first claim waits with the namespace empty")
	}
	// Made later but asking first, then made earlier; two made in the same second go
	// in the order they asked.
	g.Admit(key("a", "late"), t0.Add(3*time.Second), r.waker("late"))
	g.Admit(key("a", "early"), t0.Add(time.Second), r.waker("early"))
	g.Admit(key("a", "early-too"), t0.Add(time.Second), r.waker("early-too"))

	if !g.Waits(key("a", "early")) || g.Waits(key("a", "first")) || g.Waits(key("a", "stranger")) {
		t.Fatal("Waits says otherwise than the queue: only claims waiting for a turn that has not come wait")
	}
	g.Done(key("a", "first"))
	if g.Waits(key("a", "early")) || !g.Waits(key("a", "late")) {
		t.Fatal("Waits says otherwise than the queue once a place freed")
	}
	r.expect(t, "early")
	if g.Admit(key("a", "late"), t0.Add(3*time.Second), r.waker("late")) {
		t.Fatal("a claim made later took the place of one made earlier")
	}
	if !g.Admit(key("a", "early"), t0.Add(time.Second), r.waker("early")) {
		t.Fatal("the claim whose turn came was not taken in")
	}
	g.Done(key("a", "early"))
	g.Done(key("a", "early-too")) // gone while waiting: its turn passes on
	r.expect(t, "early", "early-too", "late")
	if !g.Admit(key("a", "late"), t0.Add(3*time.Second), r.waker("late")) {
		t.Fatal("the last claim was not taken in")
	}
}

func TestClaimsLinedUpGoInTheOrderTheyWereMade(t *testing.T) {
	g, _ := newGate(func() int { return 1 })
	var r recorder
	claimant := func(name string, made time.Duration) Claimant {
		return Claimant{Key: key("a", name), Made: t0.Add(made), Wake: r.waker(name)}
	}
	if !g.Begins("a") {
		t.Fatal("an empty namespace does not begin a burst")
	}
	// The claim looked at first was made last: it asks after the waiting ones are lined up.
	g.LineUp(key("a", "third"), []Claimant{claimant("third", 3*time.Second), claimant("first", time.Second), claimant("second", 2*time.Second),
		{Key: key("b", "elsewhere"), Made: t0, Wake: r.waker("elsewhere")}})
	if g.Begins("a") {
		t.Fatal("a namespace with claims in line begins a burst again")
	}
	r.expect(t, "first")
	if g.Admit(key("a", "third"), t0.Add(3*time.Second), r.waker("third")) {
		t.Fatal("the claim made last was taken in before those made earlier")
	}
	if !g.Admit(key("a", "first"), t0.Add(time.Second), r.waker("first")) {
		t.Fatal("the claim made first was not taken in")
	}
	// Lined up again (another kind's claims, or a second look): those held keep their place.
	g.LineUp(key("a", "third"), []Claimant{claimant("first", time.Second), claimant("third", 3*time.Second), claimant("zeroth", 0)})
	if !g.Waits(key("a", "zeroth")) || !g.Waits(key("a", "second")) {
		t.Fatal("a claim lined up later lost its turn")
	}
	g.Done(key("a", "first"))
	r.expect(t, "first", "zeroth")
	if !g.Begins("b") {
		t.Fatal("another namespace shares the burst")
	}
	g.LineUp(key("b", "x"), nil)
	g.LineUp(key("b", "x"), []Claimant{claimant("in-a", 0)})
	if !g.Begins("b") {
		t.Fatal("lining up no claim of the namespace kept a space for it")
	}
	var nilGate *Gate
	nilGate.LineUp(key("a", "x"), []Claimant{claimant("x", 0)})
	if nilGate.Begins("a") || New(func() int { return 0 }).Begins("a") {
		t.Fatal("a gate that takes every claim in asks for a line")
	}
}

func TestDoneWakesAsManyAsArePlacesFree(t *testing.T) {
	limit := 1
	g, clock := newGate(func() int { return limit })
	var r recorder
	g.Admit(key("a", "c0"), t0, r.waker("c0"))
	for _, n := range []string{"c1", "c2", "c3"} {
		if g.Admit(key("a", n), t0.Add(time.Second), r.waker(n)) {
			t.Fatalf("%s taken in beyond the limit", n)
		}
	}
	limit = 3 // more replicas, say
	clock.advance(time.Second)
	g.Done(key("a", "c0"))
	r.expect(t, "c1", "c2", "c3")
	g.Done(key("a", "stranger")) // frees nothing: wakes nobody
	if len(r.woken) != 3 {
		t.Fatalf("a claim the gate did not hold woke %v", r.woken[3:])
	}
}

func TestNoLimitAndNilGateTakeEveryClaim(t *testing.T) {
	var nilGate *Gate
	if !nilGate.Admit(key("a", "c"), t0, nil) {
		t.Error("a nil gate held a claim back")
	}
	nilGate.Done(key("a", "c"))
	g := New(func() int { return 0 })
	for i := range 5 {
		if !g.Admit(key("a", string(rune('a'+i))), t0, nil) {
			t.Errorf("claim %d held back with no limit", i)
		}
	}
}

func TestEmptyNamespacesAreForgotten(t *testing.T) {
	g := New(func() int { return 1 })
	g.Admit(key("a", "c1"), t0, func() {})
	g.Admit(key("a", "c2"), t0, func() {})
	g.Done(key("a", "c1"))
	g.Done(key("a", "c2"))
	if len(g.ns) != 0 {
		t.Fatalf("gate keeps %d namespaces after every claim is done", len(g.ns))
	}
}

func TestAThousandClaimsInAnyOrderGoOldestFirst(t *testing.T) {
	const n, limit = 1000, 3
	g, _ := newGate(func() int { return limit })
	rnd := rand.New(rand.NewPCG(1, 2))
	made := func(i int) time.Time { return t0.Add(time.Duration(i/2) * time.Second) } // two a second
	begunLongAgo(g, "a")
	for _, i := range rnd.Perm(n) {
		g.Admit(key("a", fmt.Sprint(i)), made(i), func() {})
	}
	// The first three to ask were taken in; the rest go in creation order.
	var order []int
	for round := 0; len(g.ns) > 0; round++ {
		if round > n {
			t.Fatalf("claims still held after %d rounds: %d taken in", round, len(order))
		}
		sp := g.ns["a"]
		var admitted []types.NamespacedName
		for k := range sp.making {
			admitted = append(admitted, k)
		}
		for _, k := range admitted {
			g.Done(k)
		}
		for i := range n {
			k := key("a", fmt.Sprint(i))
			if g.Waits(k) {
				continue
			}
			if _, queued := sp.queued[k]; queued && g.Admit(k, made(i), func() {}) {
				order = append(order, i)
			}
		}
	}
	if len(order) != n-limit {
		t.Fatalf("%d claims taken in from the queue, want %d", len(order), n-limit)
	}
	for j := 1; j < len(order); j++ {
		if made(order[j]).Before(made(order[j-1])) {
			t.Fatalf("claim %d (made %s) taken in after claim %d (made %s)", order[j-1], made(order[j-1]), order[j], made(order[j]))
		}
	}
}

// BenchmarkAdmitWithTenThousandWaiting is one waiting claim asked again (as its safety
// timer does) and one claim taken in and done, with 10,000 claims waiting.
func BenchmarkAdmitWithTenThousandWaiting(b *testing.B) {
	g, _ := newGate(func() int { return 20 })
	begunLongAgo(g, "a")
	for i := range 10000 {
		g.Admit(key("a", fmt.Sprint(i)), t0.Add(time.Duration(i)*time.Millisecond), func() {})
	}
	next := 10000
	b.ResetTimer()
	for i := range b.N {
		g.Waits(key("a", fmt.Sprint(5000+i%1000)))
		g.Admit(key("a", fmt.Sprint(next)), t0.Add(time.Duration(next)*time.Millisecond), func() {})
		g.Done(key("a", fmt.Sprint(next-10000)))
		next++
	}
}
