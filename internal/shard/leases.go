package shard

import (
	"context"
	"fmt"
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

// balance renews this replica's member Lease, counts the live replicas, and takes,
// keeps or lets go of shard Leases so that it holds its fair share.
func (s *Set) balance(ctx context.Context) error {
	if err := s.announce(ctx); err != nil {
		return err
	}
	members, err := s.members(ctx)
	if err != nil {
		return err
	}
	fair := (s.opts.Shards + members - 1) / max(members, 1)
	renewed := true
	for i := range s.opts.Shards {
		if err := s.visit(ctx, i, fair); err != nil {
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

// members counts the replicas whose member Lease is live, this one included.
func (s *Set) members(ctx context.Context) (int, error) {
	var list coordinationv1.LeaseList
	if err := s.client.List(ctx, &list, client.InNamespace(s.opts.Namespace)); err != nil {
		return 0, fmt.Errorf("list member leases: %w", err)
	}
	n := 0
	for i := range list.Items {
		if strings.HasPrefix(list.Items[i].Name, memberLeasePrefix) && !expired(&list.Items[i]) {
			n++
		}
	}
	return max(n, 1), nil
}

// visit takes, renews or lets go of shard i's Lease.
func (s *Set) visit(ctx context.Context, i, fair int) error {
	key := client.ObjectKey{Namespace: s.opts.Namespace, Name: fmt.Sprintf("%s%d", shardLeasePrefix, i)}
	var lease coordinationv1.Lease
	err := s.client.Get(ctx, key, &lease)
	if apierrors.IsNotFound(err) {
		if s.count() >= fair {
			return nil
		}
		lease = coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		s.hold(&lease)
		if err := s.client.Create(ctx, &lease); err != nil {
			return client.IgnoreAlreadyExists(err)
		}
		s.take(i)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read shard lease %d: %w", i, err)
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	switch {
	case holder == s.opts.Identity && s.owns(i):
		if s.letGo(i, fair) {
			return s.release(ctx, i, &lease)
		}
		s.hold(&lease)
		if err := s.client.Update(ctx, &lease); err != nil {
			s.drop(i)
			return fmt.Errorf("renew shard lease %d: %w", i, err)
		}
	case holder == "" || holder == s.opts.Identity || expired(&lease):
		if s.count() >= fair {
			return nil
		}
		s.hold(&lease)
		lease.Spec.LeaseTransitions = ptr.To(ptr.Deref(lease.Spec.LeaseTransitions, 0) + 1)
		lease.Spec.AcquireTime = lease.Spec.RenewTime
		if err := s.client.Update(ctx, &lease); err != nil {
			return client.IgnoreNotFound(ignoreConflict(err)) // another replica was faster
		}
		s.take(i)
	default:
		s.drop(i) // held, live, by another replica
	}
	return nil
}

// hold marks lease as this replica's, renewed now.
func (s *Set) hold(lease *coordinationv1.Lease) {
	lease.Spec.HolderIdentity = ptr.To(s.opts.Identity)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(s.opts.LeaseDuration / time.Second))
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
}

// release lets shard i go: it is free for the next replica to take.
func (s *Set) release(ctx context.Context, i int, lease *coordinationv1.Lease) error {
	lease.Spec.HolderIdentity = nil
	lease.Spec.RenewTime = nil
	s.drop(i)
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
		if s.client.Get(ctx, key, &lease) == nil && ptr.Deref(lease.Spec.HolderIdentity, "") == s.opts.Identity {
			_ = s.release(ctx, i, &lease)
		}
	}
	member := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: memberLeasePrefix + s.opts.Identity}}
	_ = s.client.Delete(ctx, member)
}

// expired reports whether a Lease's holder has stopped renewing it.
func expired(lease *coordinationv1.Lease) bool {
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return time.Since(lease.Spec.RenewTime.Time) > time.Duration(*lease.Spec.LeaseDurationSeconds)*time.Second
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}
