package statelock

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/holder"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LockInfo is what terraform records about a state lock's holder.
type LockInfo struct {
	// ID is the lock ID (also the Lease's holder identity).
	ID string `json:"ID"`
	// Operation is the terraform command that took the lock.
	Operation string `json:"Operation"`
	// Info is free text; a lock Terraplane takes holds its Holder here, as JSON.
	Info string `json:"Info,omitempty"`
	// Who is user@host of the terraform process that took it, or the Terraplane holder.
	Who string `json:"Who"`
	// Version of what took the lock.
	Version string `json:"Version,omitempty"`
	// Created is when the lock was taken.
	Created time.Time `json:"Created"`
	// Path is unused by the kubernetes backend.
	Path string `json:"Path"`
}

// Holder is the Terraplane process recorded in the lock, or nil for a lock that
// terraform or another tool took.
func (l LockInfo) Holder() *holder.Holder {
	var h holder.Holder
	if l.Info == "" || json.Unmarshal([]byte(l.Info), &h) != nil || h.ID == "" {
		return nil
	}
	return &h
}

// Recorded is what a workspace's state lock records.
type Recorded struct {
	// Holder is who holds the lock; nil when it is free.
	Holder *LockInfo
	// CreatePending: a create taken under the lock has an outcome not yet known.
	CreatePending bool
}

// ReadLock reads what the state lock Lease key (or, before the workspace has one, its
// state Secret) records; nothing when neither does.
func ReadLock(ctx context.Context, c client.Reader, key client.ObjectKey) (Recorded, error) {
	rs, err := readRecords(ctx, c, key)
	if err != nil {
		return Recorded{}, err
	}
	if rec := rs.lock(); rec != nil {
		return Recorded{Holder: rec.held(), CreatePending: rec.pending()}, nil
	}
	return Recorded{}, nil
}

// LockHolder reads who holds the state lock Lease key (or, before the workspace has one,
// its state Secret); nil when it is free or absent.
func LockHolder(ctx context.Context, c client.Reader, key client.ObjectKey) (*LockInfo, error) {
	r, err := ReadLock(ctx, c, key)
	return r.Holder, err
}

// getLease reads the Lease key; nil when there is none.
func getLease(ctx context.Context, c client.Reader, key client.ObjectKey) (*coordinationv1.Lease, error) {
	var lease coordinationv1.Lease
	if err := c.Get(ctx, key, &lease); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read state lock %s: %w", key.Name, err)
	}
	return &lease, nil
}

// heldBy is the lock recorded on lease; nil when it is free.
func heldBy(lease *coordinationv1.Lease) *LockInfo {
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return nil
	}
	info := &LockInfo{ID: *lease.Spec.HolderIdentity}
	if raw := lease.Annotations[common.LockInfoAnnotation]; raw != "" {
		_ = json.Unmarshal([]byte(raw), info) // a lock without readable details is still held
	}
	return info
}

// Unlock frees the state lock Lease key (or its state Secret's lock) as `terraform
// force-unlock` does: it clears the holder and its details, only if the lock still has id
// (empty id: any holder). A create recorded on it stays, for the next run to find.
func Unlock(ctx context.Context, c client.Client, key client.ObjectKey, id string) error {
	rs, err := readRecords(ctx, c, key)
	if err != nil {
		return err
	}
	rec := rs.lock()
	if rec == nil {
		return nil
	}
	held := rec.held()
	if held == nil {
		return nil
	}
	if id != "" && held.ID != id {
		return fmt.Errorf("state lock %s is now held by another run (%s)", key.Name, held.ID)
	}
	return free(ctx, c, *rec, false)
}

// StaleLockError says a state lock is held by something that is not a Terraplane
// process (a person's terraform, say), which Terraplane never releases by itself.
type StaleLockError struct {
	// Lock is the holder's details.
	Lock LockInfo
}

// Error names the holder and the way out.
func (e *StaleLockError) Error() string {
	return fmt.Sprintf("the Terraform state is locked by %s (%s since %s, lock ID %s); if that run is gone, release it with `terraplane unlock`",
		e.Lock.Who, e.Lock.Operation, e.Lock.Created.UTC().Format(time.RFC3339), e.Lock.ID)
}

// HeldError says a state lock is held by a Terraplane process that may still be running
// terraform: wait for it.
type HeldError struct {
	// Lock is the lock's details.
	Lock LockInfo
	// Holder is the process holding it.
	Holder holder.Holder
}

// Error names the holder and what it runs.
func (e *HeldError) Error() string {
	return fmt.Sprintf("the Terraform state is locked by %s (%s since %s); waiting for that run to end",
		e.Holder, e.Lock.Operation, e.Lock.Created.UTC().Format(time.RFC3339))
}
