package shard

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Lease names: one per shard, one per live replica.
const (
	shardLeasePrefix  = "terraplane-shard-"
	memberLeasePrefix = "terraplane-member-"
)

// balance renews this replica's member Lease, reads the shard and member Leases, and
// does with each shard's Lease what plan decides.
func (s *Set) balance(ctx context.Context) error {
	if err := s.announce(ctx); err != nil {
		return err
	}
	leases, members, err := s.read(ctx)
	if err != nil {
		return err
	}
	s.members.Store(int32(members))
	renewed := true
	for i, m := range s.decide(leases, members, time.Now()) {
		if err := s.apply(ctx, i, m, leases[i]); err != nil {
			renewed = false
			if ctx.Err() != nil {
				return err
			}
		}
	}
	if renewed {
		s.mu.Lock()
		s.lastRenew = time.Now()
		s.mu.Unlock()
	}
	return nil
}

// announce creates or renews this replica's member Lease.
func (s *Set) announce(ctx context.Context) error {
	name := memberLeasePrefix + s.opts.Identity
	var lease coordinationv1.Lease
	err := s.client.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: name}, &lease)
	if apierrors.IsNotFound(err) {
		lease = coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: name}}
		s.hold(&lease)
		return client.IgnoreAlreadyExists(s.client.Create(ctx, &lease))
	}
	if err != nil {
		return fmt.Errorf("read member lease: %w", err)
	}
	s.hold(&lease)
	return s.client.Update(ctx, &lease)
}

// read lists the Leases: each shard's (nil when it has none yet), and how many replicas
// have a live member Lease, this one included.
func (s *Set) read(ctx context.Context) ([]*coordinationv1.Lease, int, error) {
	var list coordinationv1.LeaseList
	if err := s.client.List(ctx, &list, client.InNamespace(s.opts.Namespace)); err != nil {
		return nil, 0, fmt.Errorf("list leases: %w", err)
	}
	shards, members := make([]*coordinationv1.Lease, s.opts.Shards), 0
	now := time.Now()
	for i := range list.Items {
		lease := &list.Items[i]
		if strings.HasPrefix(lease.Name, memberLeasePrefix) && !expired(lease, now) {
			members++
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(lease.Name, shardLeasePrefix)); err == nil &&
			strings.HasPrefix(lease.Name, shardLeasePrefix) && n >= 0 && n < s.opts.Shards {
			shards[n] = lease
		}
	}
	return shards, max(members, 1), nil
}

// decide plans this round from what the shards hold now, and stops new work at once in
// the shards it drains or lets go.
func (s *Set) decide(leases []*coordinationv1.Lease, members int, now time.Time) []move {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := make(map[int]holding, len(s.owned))
	for i, c := range s.owned {
		held[i] = holding{inFlight: c.inFlight, releasing: c.releasing}
	}
	moves := plan(s.opts.Identity, leases, held, members, now)
	for i, m := range moves {
		if m == drain || m == release {
			s.owned[i].releasing = true
		}
	}
	return moves
}

// apply does move m with shard i's Lease. A renewal that fails keeps the shard: if
// renewals keep failing, fencing stops the work on it.
func (s *Set) apply(ctx context.Context, i int, m move, lease *coordinationv1.Lease) error {
	switch m {
	case take:
		return s.acquire(ctx, i, lease)
	case renew, drain:
		s.hold(lease)
		if err := s.client.Update(ctx, lease); err != nil {
			return fmt.Errorf("renew shard lease %d: %w", i, err)
		}
	case release:
		return s.release(ctx, i, lease)
	case lose:
		s.lose(i)
	}
	return nil
}

// acquire creates shard i's Lease, or takes it over, in this replica's name; when
// another replica was faster, the shard is left to it.
func (s *Set) acquire(ctx context.Context, i int, lease *coordinationv1.Lease) error {
	if lease == nil {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: fmt.Sprintf("%s%d", shardLeasePrefix, i)}}
		s.hold(lease)
		if err := s.client.Create(ctx, lease); err != nil {
			return client.IgnoreAlreadyExists(err)
		}
		s.take(i)
		return nil
	}
	if ptr.Deref(lease.Spec.HolderIdentity, "") != s.opts.Identity {
		lease.Spec.LeaseTransitions = ptr.To(ptr.Deref(lease.Spec.LeaseTransitions, 0) + 1)
	}
	s.hold(lease)
	lease.Spec.AcquireTime = lease.Spec.RenewTime
	if err := s.client.Update(ctx, lease); err != nil {
		return client.IgnoreNotFound(ignoreConflict(err))
	}
	s.take(i)
	return nil
}

// hold marks lease as this replica's, renewed now.
func (s *Set) hold(lease *coordinationv1.Lease) {
	lease.Spec.HolderIdentity = ptr.To(s.opts.Identity)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(s.opts.LeaseDuration / time.Second))
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
}

// release lets shard i go, and its Lease when it is in this replica's name: it is free
// for the next replica to take.
func (s *Set) release(ctx context.Context, i int, lease *coordinationv1.Lease) error {
	s.drop(i)
	if lease == nil || ptr.Deref(lease.Spec.HolderIdentity, "") != s.opts.Identity {
		return nil
	}
	lease.Spec.HolderIdentity = nil
	lease.Spec.RenewTime = nil
	if err := s.client.Update(ctx, lease); err != nil {
		return client.IgnoreNotFound(ignoreConflict(err))
	}
	return nil
}

// leave lets every shard and the member Lease go once the runs in them have finished,
// so the other replicas take over without waiting for the Leases to expire. A shard whose
// runs have not finished when ctx ends is not let go: its Lease expires, and its state
// locks keep another replica out until the runs are gone.
func (s *Set) leave(ctx context.Context) {
	for _, i := range s.Owned() {
		s.mu.Lock()
		if c := s.owned[i]; c != nil {
			c.releasing = true
		}
		s.mu.Unlock()
	}
	for _, i := range s.Owned() {
		for !s.drained(i) && ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
		}
		if !s.drained(i) {
			continue
		}
		var lease coordinationv1.Lease
		key := client.ObjectKey{Namespace: s.opts.Namespace, Name: fmt.Sprintf("%s%d", shardLeasePrefix, i)}
		if s.client.Get(ctx, key, &lease) == nil {
			_ = s.release(ctx, i, &lease)
		}
	}
	member := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: memberLeasePrefix + s.opts.Identity}}
	_ = s.client.Delete(ctx, member)
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}
