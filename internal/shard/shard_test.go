package shard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func newSets(t *testing.T, c client.Client, names ...string) []*Set {
	t.Helper()
	var out []*Set
	for _, n := range names {
		s, err := New(c, Options{Shards: 6, Identity: n, Namespace: "system", LeaseDuration: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func fakeClient(t *testing.T) client.Client {
	return fake.NewClientBuilder().WithScheme(leaseScheme(t)).Build()
}

// noOverlap fails when two sets hold one shard at once.
func noOverlap(t *testing.T, sets []*Set) {
	t.Helper()
	seen := map[int]string{}
	for _, s := range sets {
		for _, i := range s.Owned() {
			if other, ok := seen[i]; ok {
				t.Fatalf("shard %d held by %s and %s", i, other, s.opts.Identity)
			}
			seen[i] = s.opts.Identity
		}
	}
}

func TestBalanceSharesShardsAndRebalancesOnJoin(t *testing.T) {
	ctx := context.Background()
	c := fakeClient(t)
	sets := newSets(t, c, "a", "b")
	if err := sets[0].balance(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(sets[0].Owned()); got != 6 {
		t.Fatalf("alone, a holds %d shards, want all 6", got)
	}
	// a has a run in flight in one shard: that shard must not change hands before it ends
	uid := types.UID("resource-1")
	_, done, ok := sets[0].Begin(ctx, uid)
	if !ok {
		t.Fatal("a does not own a resource of a shard it holds")
	}
	for range 3 {
		for _, s := range sets {
			if err := s.balance(ctx); err != nil {
				t.Fatal(err)
			}
			noOverlap(t, sets)
		}
	}
	if !slices.Contains(sets[0].Owned(), sets[0].Of(uid)) {
		t.Fatal("a let go of a shard with a run in flight")
	}
	done()
	for range 2 {
		for _, s := range sets {
			if err := s.balance(ctx); err != nil {
				t.Fatal(err)
			}
			noOverlap(t, sets)
		}
	}
	if a, b := len(sets[0].Owned()), len(sets[1].Owned()); a != 3 || b != 3 {
		t.Fatalf("after b joined: a holds %d, b holds %d; want 3 each", a, b)
	}
	if _, _, ok := sets[1].Begin(ctx, types.UID("x")); ok == slices.Contains(sets[0].Owned(), sets[0].Of("x")) {
		t.Fatal("exactly one replica must own a resource")
	}
	for i := range 50 {
		uid := types.UID(fmt.Sprintf("r-%d", i))
		if sets[0].Holds(uid) == sets[1].Holds(uid) {
			t.Fatalf("%s: held by a %v, by b %v; want exactly one (metrics of each resource come from one replica)", uid, sets[0].Holds(uid), sets[1].Holds(uid))
		}
	}
}

func TestExpiredShardsAreTakenOver(t *testing.T) {
	ctx := context.Background()
	c := fakeClient(t)
	sets := newSets(t, c, "a", "b")
	for range 3 {
		for _, s := range sets {
			if err := s.balance(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	// a dies: its Leases age past their duration
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases); err != nil {
		t.Fatal(err)
	}
	for i := range leases.Items {
		l := &leases.Items[i]
		if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "a" {
			l.Spec.RenewTime.Time = time.Now().Add(-time.Minute)
			if err := c.Update(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sets[1].balance(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(sets[1].Owned()); got != 6 {
		t.Fatalf("b holds %d shards after a died, want 6", got)
	}
}

func TestNilSetOwnsEverything(t *testing.T) {
	var s *Set
	if !s.Holds("any") {
		t.Fatal("no sharding must hold every resource")
	}
	_, done, ok := s.Begin(context.Background(), "any")
	if !ok {
		t.Fatal("no sharding must own every resource")
	}
	done()
}

// TestFencingInterruptsRuns: a replica that could not renew its shard Leases in time
// stops its runs in flight (terraform is interrupted), not only new work.
func TestFencingInterruptsRuns(t *testing.T) {
	ctx := context.Background()
	sets := newSets(t, fakeClient(t), "a")
	if err := sets[0].balance(ctx); err != nil {
		t.Fatal(err)
	}
	run, done, ok := sets[0].Begin(ctx, "resource-1")
	if !ok {
		t.Fatal("a does not own a resource of a shard it holds")
	}
	defer done()
	sets[0].lastRenew = time.Now().Add(-time.Minute) // cut off from the API server since
	sets[0].fenceIfStale(logr.Discard(), time.Now())
	select {
	case <-run.Done():
	default:
		t.Fatal("a fenced replica's run goes on")
	}
	if _, _, ok := sets[0].Begin(ctx, "resource-1"); ok {
		t.Fatal("a fenced replica takes new work")
	}
}

// TestLeaveKeepsShardsWithRunsInFlight: a replica shutting down lets go of the shards
// whose runs have finished, never of one with a run still in flight.
func TestLeaveKeepsShardsWithRunsInFlight(t *testing.T) {
	ctx := context.Background()
	c := fakeClient(t)
	sets := newSets(t, c, "a")
	if err := sets[0].balance(ctx); err != nil {
		t.Fatal(err)
	}
	busy := sets[0].Of("resource-1")
	_, done, _ := sets[0].Begin(ctx, "resource-1")
	defer done()
	stop, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	sets[0].leave(stop)
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases); err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Items {
		held := l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "a"
		if want := l.Name == fmt.Sprintf("%s%d", shardLeasePrefix, busy); held != want && strings.HasPrefix(l.Name, shardLeasePrefix) {
			t.Errorf("after leaving, %s held = %v, want %v", l.Name, held, want)
		}
	}
}
