package terraform

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// lockRecheck is how long a state lock this process found free (or freed with its own
// run) is taken to be free still by a resource that needs no run. Within this process
// only a run can leave the lock held, and a run forgets the record first; the recheck
// catches a lock another replica's killed run left before this one took the resource.
const lockRecheck = 5 * time.Minute

// freeLocks remembers when each resource's state lock was last known to be free, so that
// a reconcile with nothing to do (most of them) costs the API server no read of the lock.
type freeLocks struct {
	mu   sync.Mutex
	seen map[types.UID]time.Time
}

// known reports whether uid's lock was known to be free within lockRecheck of now.
func (f *freeLocks) known(uid types.UID, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.seen[uid]
	return ok && now.Sub(at) < lockRecheck
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
