package terraform

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// freeLocks remembers when each resource's state lock was last known to be free, so that
// a reconcile with nothing to do (most of them) costs the API server no read of the lock.
// Within this process only a run can leave the lock held, and a run forgets the record
// first; another process's killed run can have left it held only while that process
// held the resource, so a record is trusted only when it is newer than this replica's
// hold on the resource's shard.
type freeLocks struct {
	mu   sync.Mutex
	seen map[types.UID]time.Time
}

// known reports whether uid's lock was known to be free after since, when this replica
// took the resource's shard (the zero time: it holds every resource for its whole life).
func (f *freeLocks) known(uid types.UID, since time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.seen[uid]
	return ok && at.After(since)
}

// free records that uid's lock is free at now.
func (f *freeLocks) free(uid types.UID, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = map[types.UID]time.Time{}
	}
	f.seen[uid] = now
}

// forget drops what is known of uid's lock: a run is about to take it, or the resource
// is gone.
func (f *freeLocks) forget(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.seen, uid)
}
