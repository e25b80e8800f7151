package shard

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// shardLease reads shard i's Lease.
func shardLease(t *testing.T, c client.Client, i int) *coordinationv1.Lease {
	t.Helper()
	var l coordinationv1.Lease
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "system", Name: fmt.Sprintf("%s%d", shardLeasePrefix, i)}, &l); err != nil {
		t.Fatal(err)
	}
	return &l
}

// holderOf is the holder of shard i's Lease.
func holderOf(t *testing.T, c client.Client, i int) string {
	return ptr.Deref(shardLease(t, c, i).Spec.HolderIdentity, "")
}

// alone is replica a, balanced once alone: it holds every shard, with a run in flight in
// resource-1's.
func alone(t *testing.T, c client.Client) (s *Set, busy int, run context.Context) {
	t.Helper()
	s = newSets(t, c, "a")[0]
	if err := s.balance(context.Background()); err != nil {
		t.Fatal(err)
	}
	run, done, ok := s.Begin(context.Background(), "resource-1")
	if !ok {
		t.Fatal("a does not own a resource of a shard it holds")
	}
	t.Cleanup(done)
	return s, s.Of("resource-1"), run
}

// TestLostShardInterruptsRuns: a shard another replica holds by now is lost: its runs in
// flight are interrupted and it takes no new work.
func TestLostShardInterruptsRuns(t *testing.T) {
	c := fakeClient(t)
	s, busy, run := alone(t, c)
	taken := shardLease(t, c, busy)
	taken.Spec.HolderIdentity = ptr.To("b")
	taken.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	if err := c.Update(context.Background(), taken); err != nil {
		t.Fatal(err)
	}
	if err := s.balance(context.Background()); err != nil {
		t.Fatal(err)
	}
	if run.Err() == nil {
		t.Error("the run in a shard another replica holds goes on")
	}
	if _, _, ok := s.Begin(context.Background(), "resource-1"); ok {
		t.Error("a lost shard takes new work")
	}
}

// TestRenewalFailureKeepsShards: a renewal that fails keeps the shard and its runs (fencing
// decides if renewals keep failing), and the round does not count as renewed.
func TestRenewalFailureKeepsShards(t *testing.T) {
	failing := true
	c := fake.NewClientBuilder().WithScheme(leaseScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if failing && obj.GetName() != memberLeasePrefix+"a" {
				return errors.New("the API server is unavailable")
			}
			return c.Update(ctx, obj, opts...)
		}}).Build()
	failing = false
	s, _, run := alone(t, c)
	renewed := s.lastRenew
	failing = true
	if err := s.balance(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(s.Owned()); got != 6 || run.Err() != nil {
		t.Errorf("after failed renewals a holds %d shards, run ended: %v; want all 6, and the run going on", got, run.Err())
	}
	if !s.lastRenew.Equal(renewed) {
		t.Error("a round whose renewals failed counts as renewed: fencing would never come")
	}
}

// TestVanishedLeaseIsRecreated: a held shard whose Lease was deleted gets it back, and
// keeps its runs.
func TestVanishedLeaseIsRecreated(t *testing.T) {
	c := fakeClient(t)
	s, busy, run := alone(t, c)
	if err := c.Delete(context.Background(), shardLease(t, c, busy)); err != nil {
		t.Fatal(err)
	}
	if err := s.balance(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := holderOf(t, c, busy); got != "a" || run.Err() != nil {
		t.Errorf("the deleted Lease is held by %q, the run ended: %v; want a's, and the run going on", got, run.Err())
	}
	if s.drained(busy) {
		t.Error("the shard forgot its run in flight")
	}
}

// TestTakeOver: a Lease that changes hands counts a transition; a replica taking back its
// own does not.
func TestTakeOver(t *testing.T) {
	ctx := context.Background()
	c := fakeClient(t)
	old := metav1.MicroTime{Time: time.Now().Add(-time.Hour)}
	for i, holder := range []string{"b", "a"} {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "system", Name: fmt.Sprintf("%s%d", shardLeasePrefix, i)},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(3)), RenewTime: &old, LeaseTransitions: ptr.To(int32(4))}}
		if err := c.Create(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	s := newSets(t, c, "a")[0]
	if err := s.balance(ctx); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int32{5, 4} {
		l := shardLease(t, c, i)
		if got := ptr.Deref(l.Spec.LeaseTransitions, 0); got != want || ptr.Deref(l.Spec.HolderIdentity, "") != "a" || l.Spec.AcquireTime == nil {
			t.Errorf("shard %d: holder %v, %d transitions, acquired %v; want a, %d, now", i, ptr.Deref(l.Spec.HolderIdentity, ""), got, l.Spec.AcquireTime, want)
		}
	}
}

// TestRead: the shard Leases by number, and the live replicas counted.
func TestRead(t *testing.T) {
	ctx := context.Background()
	c := fakeClient(t)
	now, old := metav1.MicroTime{Time: time.Now()}, metav1.MicroTime{Time: time.Now().Add(-time.Hour)}
	for name, renewed := range map[string]metav1.MicroTime{
		memberLeasePrefix + "a": now, memberLeasePrefix + "b": now, memberLeasePrefix + "gone": old,
		shardLeasePrefix + "0": now, shardLeasePrefix + "5": old, shardLeasePrefix + "6": now, shardLeasePrefix + "x": now,
		"lock-tfstate-default-1": now,
	} {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "system", Name: name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To(int32(3)), RenewTime: &renewed}}
		if err := c.Create(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	s := newSets(t, c, "a")[0]
	leases, members, err := s.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range leases {
		if l == nil {
			names = append(names, "")
		} else {
			names = append(names, l.Name)
		}
	}
	if diff := cmp.Diff([]string{shardLeasePrefix + "0", "", "", "", "", shardLeasePrefix + "5"}, names); diff != "" {
		t.Errorf("shard Leases (-want +got):\n%s", diff)
	}
	if members != 2 {
		t.Errorf("%d live members, want 2 (a and b, not the expired one)", members)
	}
}

// TestFenceIfStale: a replica stops work on its shards, interrupting their runs, once
// it has not renewed their Leases for half their duration.
func TestFenceIfStale(t *testing.T) {
	cases := []struct {
		name    string
		since   time.Duration // since the last renewal; the Leases last 3s
		fenced  bool
		holding int
	}{
		{"renewed just now", 0, false, 6},
		{"renewed within half the duration", 1400 * time.Millisecond, false, 6},
		{"not renewed for half the duration", 1600 * time.Millisecond, true, 0},
		{"not renewed for a minute", time.Minute, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _, run := alone(t, fakeClient(t))
			s.fenceIfStale(logr.Discard(), s.lastRenew.Add(tc.since))
			if fenced := run.Err() != nil; fenced != tc.fenced {
				t.Errorf("run interrupted: %v, want %v", fenced, tc.fenced)
			}
			if got := len(s.Owned()); got != tc.holding {
				t.Errorf("holds %d shards, want %d", got, tc.holding)
			}
		})
	}
}

// TestBegin: work starts only in a shard held and not being let go, and is counted in
// flight until done.
func TestBegin(t *testing.T) {
	cases := []struct {
		name  string
		claim *claim
		ok    bool
	}{
		{"a shard held", &claim{}, true},
		{"a shard being let go", &claim{releasing: true}, false},
		{"a shard not held", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSets(t, fakeClient(t), "a")[0]
			i := s.Of("resource-1")
			if tc.claim != nil {
				s.owned[i] = tc.claim
			}
			run, done, ok := s.Begin(context.Background(), "resource-1")
			if ok != tc.ok {
				t.Fatalf("Begin ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if s.drained(i) {
				t.Error("a run begun is not in flight")
			}
			done()
			if !s.drained(i) || run.Err() == nil {
				t.Errorf("after done: drained %v, the run's context ended %v; want both", s.drained(i), run.Err() != nil)
			}
		})
	}
}

// TestTakeTellsSubscribers: a shard newly taken is told to every subscriber once; one
// taken back while held is not.
func TestTakeTellsSubscribers(t *testing.T) {
	s := newSets(t, fakeClient(t), "a")[0]
	one, two := s.subscribe(), s.subscribe()
	s.take(1)
	s.take(4)
	s.take(1)
	for _, sub := range []*subscriber{one, two} {
		select {
		case <-sub.wake:
		default:
			t.Error("a subscriber was not woken")
		}
		if diff := cmp.Diff(map[int]bool{1: true, 4: true}, s.taken(sub)); diff != "" {
			t.Errorf("shards taken (-want +got):\n%s", diff)
		}
	}
	s.owned[1].inFlight = 1
	s.take(1)
	if s.owned[1].inFlight != 1 || len(s.taken(one)) != 0 {
		t.Error("taking back a shard held reset its runs, or told the subscribers again")
	}
}

func leaseScheme(t *testing.T) *runtime.Scheme {
	scheme := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// TestHeldSince: a shard is held since it was last taken; taken again after it was
// lost, it is held since then; one not held, or being let go, is not held at all.
func TestHeldSince(t *testing.T) {
	s := newSets(t, fakeClient(t), "a")[0]
	i := s.Of("resource-1")
	if _, ok := s.HeldSince("resource-1"); ok {
		t.Fatal("a shard never taken is held")
	}
	before := time.Now()
	s.take(i)
	first, ok := s.HeldSince("resource-1")
	if !ok || first.Before(before) {
		t.Fatalf("after take: held since %v (ok %v), want at or after %v", first, ok, before)
	}
	s.take(i)
	if again, _ := s.HeldSince("resource-1"); !again.Equal(first) {
		t.Errorf("taken again while held: since %v, want %v", again, first)
	}
	s.lose(i)
	if _, ok := s.HeldSince("resource-1"); ok {
		t.Error("a lost shard is held")
	}
	time.Sleep(time.Millisecond)
	s.take(i)
	if retaken, _ := s.HeldSince("resource-1"); !retaken.After(first) {
		t.Errorf("taken after it was lost: since %v, want after %v", retaken, first)
	}
	s.owned[i].releasing = true
	if _, ok := s.HeldSince("resource-1"); ok {
		t.Error("a shard being let go is held")
	}
	var off *Set
	if since, ok := off.HeldSince("any"); !ok || !since.IsZero() {
		t.Errorf("sharding off: since %v (ok %v), want the zero time, held", since, ok)
	}
}

// TestMembersCounted: a replica knows, from its last round, how many replicas hold a
// live member Lease; before its first round, and without sharding, it counts itself.
func TestMembersCounted(t *testing.T) {
	ctx := context.Background()
	var none *Set
	if got := none.Members(); got != 1 {
		t.Errorf("no sharding: %d members, want 1", got)
	}
	sets := newSets(t, fakeClient(t), "a", "b", "c")
	if got := sets[0].Members(); got != 1 {
		t.Errorf("before a round: %d members, want 1", got)
	}
	for _, s := range sets {
		if err := s.balance(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := sets[0].balance(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sets[0].Members(); got != 3 {
		t.Errorf("%d members, want 3", got)
	}
}
