package shard

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// DefaultLeaseDuration is how long a shard stays with a replica that stopped renewing it.
const DefaultLeaseDuration = 15 * time.Second

// Options configure a replica's share of the shards.
type Options struct {
	// Shards is the fixed number of shards the resources are split into.
	Shards int
	// Identity names this replica in the Leases (the pod name).
	Identity string
	// Namespace holds the shard and member Leases.
	Namespace string
	// LeaseDuration is how long an unrenewed Lease holds; 0 means DefaultLeaseDuration.
	LeaseDuration time.Duration
}

// Set is the shards this replica holds. A nil *Set holds every resource: sharding off.
type Set struct {
	client client.Client
	opts   Options
	renew  time.Duration

	members atomic.Int32 // replicas with a live member Lease at the last count

	mu        sync.Mutex
	owned     map[int]*claim
	gained    []*subscriber
	lastRenew time.Time
}

// claim is one held shard: since when, the runs in flight in it, and whether it is
// being let go.
type claim struct {
	since     time.Time
	inFlight  int
	releasing bool
	stops     map[*context.CancelFunc]bool // interrupt the runs in flight
}

// interrupt stops every run in flight in the shard. The caller holds s.mu.
func (c *claim) interrupt() {
	for stop := range c.stops {
		(*stop)()
	}
}

// New returns the shard set of one replica; Start makes it take its share.
func New(c client.Client, opts Options) (*Set, error) {
	if opts.Shards < 1 {
		return nil, fmt.Errorf("shards must be at least 1, not %d", opts.Shards)
	}
	if opts.Identity == "" {
		return nil, fmt.Errorf("a sharded replica needs an identity (--shard-identity or POD_NAME)")
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	return &Set{client: c, opts: opts, renew: opts.LeaseDuration / 3, owned: map[int]*claim{}}, nil
}

// Members is how many replicas had a live member Lease when last counted, this one
// included; a nil Set, or one that has not counted yet, is one replica.
func (s *Set) Members() int {
	if s == nil {
		return 1
	}
	return max(1, int(s.members.Load()))
}

// Of is the shard a resource belongs to: a hash of its UID.
func (s *Set) Of(uid types.UID) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	return int(h.Sum32() % uint32(s.opts.Shards))
}

// Begin starts work on a resource: ok is false when another replica owns its shard (or
// this one is letting it go). The work runs with the returned context, which ends when
// this replica is fenced off the shard, so that its terraform is interrupted before
// another replica may take over. done must be called when the work ends.
func (s *Set) Begin(ctx context.Context, uid types.UID) (context.Context, func(), bool) {
	if s == nil {
		return ctx, func() {}, true
	}
	i := s.Of(uid)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.owned[i]
	if c == nil || c.releasing {
		return ctx, nil, false
	}
	ctx, stop := context.WithCancel(ctx)
	if c.stops == nil {
		c.stops = map[*context.CancelFunc]bool{}
	}
	c.stops[&stop] = true
	c.inFlight++
	return ctx, func() {
		s.mu.Lock()
		c.inFlight--
		delete(c.stops, &stop)
		s.mu.Unlock()
		stop()
	}, true
}

// Holds reports whether this replica holds the shard of the resource uid now, and so
// reports on it (its metrics); a nil Set holds every resource.
func (s *Set) Holds(uid types.UID) bool {
	_, ok := s.HeldSince(uid)
	return ok
}

// HeldSince is when this replica took the shard of the resource uid, which it holds
// without a break since then; the zero time when sharding is off (the replica holds
// every resource for its whole life). ok is false when it does not hold the shard.
func (s *Set) HeldSince(uid types.UID) (since time.Time, ok bool) {
	if s == nil {
		return time.Time{}, true
	}
	i := s.Of(uid)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.owned[i]
	if c == nil || c.releasing {
		return time.Time{}, false
	}
	return c.since, true
}

// Owned lists the shards this replica holds now.
func (s *Set) Owned() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, 0, len(s.owned))
	for i := range s.owned {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// subscriber collects the shards taken since it last looked, and is woken for them.
type subscriber struct {
	pending map[int]bool
	wake    chan struct{}
}

// subscribe returns a subscriber told of each shard this replica takes.
func (s *Set) subscribe() *subscriber {
	sub := &subscriber{pending: map[int]bool{}, wake: make(chan struct{}, 1)}
	s.mu.Lock()
	s.gained = append(s.gained, sub)
	s.mu.Unlock()
	return sub
}

// taken returns, and forgets, the shards taken since sub last looked.
func (s *Set) taken(sub *subscriber) map[int]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := sub.pending
	sub.pending = map[int]bool{}
	return out
}

// retake gives shards back to sub to look at again in a second, after a failed list.
func (s *Set) retake(sub *subscriber, shards map[int]bool) {
	s.mu.Lock()
	for i := range shards {
		sub.pending[i] = true
	}
	s.mu.Unlock()
	time.AfterFunc(time.Second, func() {
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	})
}

// NeedLeaderElection is false: every replica holds its share.
func (s *Set) NeedLeaderElection() bool { return false }

// Start takes and keeps this replica's share of the shards until ctx ends, then lets
// them go (after their runs) so others take over at once.
func (s *Set) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("shards").WithValues("identity", s.opts.Identity)
	ticker := time.NewTicker(s.renew)
	defer ticker.Stop()
	for {
		if err := s.balance(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "shard leases")
		}
		s.fenceIfStale(logger, time.Now())
		select {
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.Background(), s.opts.LeaseDuration)
			defer cancel()
			s.leave(stop)
			return nil
		case <-ticker.C:
		}
	}
}

// fenceIfStale stops working on every shard once its Leases may have expired, so a
// replica cut off from the API server never overlaps the one that takes over.
func (s *Set) fenceIfStale(logger logr.Logger, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.owned) > 0 && stale(s.lastRenew, now, s.opts.LeaseDuration) {
		logger.Info("could not renew shard leases in time; stopping work on them and interrupting their runs", "shards", len(s.owned))
		for _, c := range s.owned {
			c.interrupt()
		}
		clear(s.owned)
	}
}

// take records shard i as held and tells the subscribers; a shard held already keeps
// its runs in flight.
func (s *Set) take(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owned[i] != nil {
		return
	}
	s.owned[i] = &claim{since: time.Now()}
	for _, sub := range s.gained {
		sub.pending[i] = true
		select {
		case sub.wake <- struct{}{}:
		default: // already woken: it reads every pending shard
		}
	}
}

// drop forgets shard i: it takes no new work.
func (s *Set) drop(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.owned, i)
}

// lose forgets shard i, which another replica holds, and interrupts its runs in flight.
func (s *Set) lose(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.owned[i]; c != nil {
		c.interrupt()
	}
	delete(s.owned, i)
}

// drained reports whether no run is in flight in shard i.
func (s *Set) drained(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.owned[i]
	return c == nil || c.inFlight == 0
}
