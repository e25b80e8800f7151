package shard

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
)

// move is what a replica does with one shard's Lease in one round of balancing.
type move int

const (
	// stay leaves the shard alone: another replica's live Lease, or beyond this
	// replica's fair share.
	stay move = iota
	// take creates the shard's Lease or takes it over (free, expired, or this
	// replica's from before), and works on the shard.
	take
	// renew renews this replica's Lease on the shard.
	renew
	// drain renews the Lease, but the shard takes no new work: it goes once its runs end.
	drain
	// release lets the Lease go: the shard was drained, and its runs have ended.
	release
	// lose stops work on a shard another replica holds, interrupting its runs.
	lose
)

var moveNames = [...]string{stay: "stay", take: "take", renew: "renew", drain: "drain", release: "release", lose: "lose"}

func (m move) String() string { return moveNames[m] }

// holding is what balancing reads of a shard this replica holds.
type holding struct {
	inFlight  int  // runs in flight in the shard
	releasing bool // being let go: no new work
}

// plan decides what replica me does with each shard's Lease: leases[i] is shard i's
// Lease as read (nil: none yet), held the shards me holds, members the live replicas
// (me included). Up to its fair share, me takes shards whose Lease is missing, free,
// expired or its own; it never touches another replica's live Lease, and stops work on
// a shard another holds. Beyond its fair share it drains shards, in order, and lets
// each go once no run is in flight in it.
func plan(me string, leases []*coordinationv1.Lease, held map[int]holding, members int, now time.Time) []move {
	fair := fairShare(len(leases), members)
	count, active := len(held), 0 // shards held; of those, not being let go
	for _, h := range held {
		if !h.releasing {
			active++
		}
	}
	moves := make([]move, len(leases))
	for i, lease := range leases {
		h, mine := held[i]
		holder := ""
		if lease != nil {
			holder = ptr.Deref(lease.Spec.HolderIdentity, "")
		}
		othersLive := holder != "" && holder != me && !expired(lease, now)
		switch {
		case mine && othersLive:
			moves[i] = lose
			if !h.releasing {
				active--
			}
		case mine && holder == me:
			if !h.releasing && active > fair {
				h.releasing = true
				active--
			}
			moves[i] = keep(h)
		case mine && h.releasing && h.inFlight == 0:
			moves[i] = release // its Lease is no longer in its name: only the shard goes
		case mine: // its Lease is gone, free, or expired in another's name: it stays ours
			moves[i] = take
		case othersLive || count >= fair:
			moves[i] = stay
		default:
			moves[i] = take
			count++
		}
		if moves[i] == lose || moves[i] == release {
			count--
		}
	}
	return moves
}

// keep is the move for a shard this replica holds in its own name: renewed, drained
// while being let go, released once its runs have ended.
func keep(h holding) move {
	switch {
	case !h.releasing:
		return renew
	case h.inFlight > 0:
		return drain
	default:
		return release
	}
}

// fairShare is how many of shards each of members replicas holds at most.
func fairShare(shards, members int) int {
	members = max(members, 1)
	return (shards + members - 1) / members
}

// expired reports whether a Lease's holder has stopped renewing it by now.
func expired(lease *coordinationv1.Lease, now time.Time) bool {
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return now.Sub(lease.Spec.RenewTime.Time) > time.Duration(*lease.Spec.LeaseDurationSeconds)*time.Second
}

// stale reports whether a replica that last renewed its Leases at lastRenew must stop
// working on its shards by now: they may expire before it renews them again.
func stale(lastRenew, now time.Time, leaseDuration time.Duration) bool {
	return now.Sub(lastRenew) > leaseDuration/2
}
