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

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

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
	if want := []string{"early"}; !slices.Equal(r.woken, want) {
		t.Fatalf("woken %v, want %v", r.woken, want)
	}
	if g.Admit(key("a", "late"), t0.Add(3*time.Second), r.waker("late")) {
		t.Fatal("a claim made later took the place of one made earlier")
	}
	if !g.Admit(key("a", "early"), t0.Add(time.Second), r.waker("early")) {
		t.Fatal("the claim whose turn came was not taken in")
	}
	g.Done(key("a", "early"))
	g.Done(key("a", "early-too")) // gone while waiting: its turn passes on
	if want := []string{"early", "early-too", "late"}; !slices.Equal(r.woken, want) {
		t.Fatalf("woken %v, want %v", r.woken, want)
	}
	if !g.Admit(key("a", "late"), t0.Add(3*time.Second), r.waker("late")) {
		t.Fatal("the last claim was not taken in")
	}
}

func TestDoneWakesAsManyAsArePlacesFree(t *testing.T) {
	limit := 1
	g := New(func() int { return limit })
	var r recorder
	g.Admit(key("a", "c0"), t0, r.waker("c0"))
	for _, n := range []string{"c1", "c2", "c3"} {
		if g.Admit(key("a", n), t0.Add(time.Second), r.waker(n)) {
			t.Fatalf("%s taken in beyond the limit", n)
		}
	}
	limit = 3 // more replicas, say
	g.Done(key("a", "c0"))
	if want := []string{"c1", "c2", "c3"}; !slices.Equal(r.woken, want) {
		t.Fatalf("woken %v, want %v", r.woken, want)
	}
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
	g := New(func() int { return limit })
	rnd := rand.New(rand.NewPCG(1, 2))
	made := func(i int) time.Time { return t0.Add(time.Duration(i/2) * time.Second) } // two a second
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
	g := New(func() int { return 20 })
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
