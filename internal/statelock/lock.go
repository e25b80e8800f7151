package statelock

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LockInfoAnnotation is where terraform's kubernetes backend keeps a lock's details on its Lease.
const LockInfoAnnotation = "app.terraform.io/lock-info"

// LockInfo is what terraform records about a state lock's holder.
type LockInfo struct {
	// ID is the lock ID (also the Lease's holder identity).
	ID string `json:"ID"`
	// Operation is the terraform command that took the lock.
	Operation string `json:"Operation"`
	// Who is user@host of the terraform process that took it.
	Who string `json:"Who"`
	// Created is when the lock was taken.
	Created time.Time `json:"Created"`
}

// LockHolder reads who holds the state lock Lease; nil when it is free or absent.
func LockHolder(ctx context.Context, c client.Client, key client.ObjectKey) (*LockInfo, error) {
	var lease coordinationv1.Lease
	if err := c.Get(ctx, key, &lease); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read state lock %s: %w", key.Name, err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return nil, nil
	}
	info := &LockInfo{ID: *lease.Spec.HolderIdentity}
	if raw := lease.Annotations[LockInfoAnnotation]; raw != "" {
		_ = json.Unmarshal([]byte(raw), info) // a lock without readable details is still held
	}
	return info, nil
}

// Unlock frees the state lock Lease as `terraform force-unlock` does: it clears the
// holder and its details, only if the lock still has id (empty id: any holder).
func Unlock(ctx context.Context, c client.Client, key client.ObjectKey, id string) error {
	var lease coordinationv1.Lease
	if err := c.Get(ctx, key, &lease); err != nil {
		return client.IgnoreNotFound(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return nil
	}
	if id != "" && *lease.Spec.HolderIdentity != id {
		return fmt.Errorf("state lock %s is now held by another run (%s)", key.Name, *lease.Spec.HolderIdentity)
	}
	lease.Spec.HolderIdentity = nil
	delete(lease.Annotations, LockInfoAnnotation)
	if err := c.Update(ctx, &lease); err != nil {
		return fmt.Errorf("release state lock %s: %w", key.Name, err)
	}
	return nil
}

// StaleLockError says a state lock is held by a run this engine cannot vouch for.
type StaleLockError struct {
	// Lock is the holder's details.
	Lock LockInfo
}

// Error names the holder and the way out.
func (e *StaleLockError) Error() string {
	return fmt.Sprintf("the Terraform state is locked by %s (%s since %s, lock ID %s); if that run is gone, release it with `terraplane unlock`",
		e.Lock.Who, e.Lock.Operation, e.Lock.Created.UTC().Format(time.RFC3339), e.Lock.ID)
}

// ClearStale releases the state lock in Lease key when no live run holds it: busy is
// false (no run of this controller is in flight for the workspace) and the lock was taken
// by a terraform of owner, this host (so by this process or an earlier, dead one; another
// replica's lock names another host and is left alone with a *StaleLockError). It
// returns how old the cleared lock was, or 0 when there was none.
func ClearStale(ctx context.Context, c client.Client, key client.ObjectKey, owner string, busy bool) (time.Duration, error) {
	info, err := LockHolder(ctx, c, key)
	if err != nil || info == nil {
		return 0, err
	}
	if busy || info.Who != owner {
		return 0, &StaleLockError{Lock: *info}
	}
	if err := Unlock(ctx, c, key, info.ID); err != nil {
		return 0, err
	}
	age := time.Nanosecond // cleared, age unknown
	if !info.Created.IsZero() {
		age = max(time.Since(info.Created), age)
	}
	return age, nil
}
