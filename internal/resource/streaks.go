package resource

import (
	"fmt"
	"sync"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// staleLimit is how many reconciles in a row may end stale before it is reported.
const staleLimit = 5

// maxStaleBackoff caps the wait between reconciles of a reported streak.
const maxStaleBackoff = 5 * time.Minute

// Streaks counts, per object, the reconciles in a row that ended stale: a write met a
// Conflict or AlreadyExists because the cache was behind. A few are normal, and retried
// quietly and soon. A streak means the cache cannot see what blocks the write (an
// object it does not watch, say): it is reported (Synced=False, one event) and retried
// with a backoff that doubles up to maxStaleBackoff. The zero value is ready to use.
type Streaks struct {
	mu sync.Mutex
	n  map[types.UID]int
}

// Classify is Classify for the object uid, reporting a streak of stale outcomes.
func (s *Streaks) Classify(uid types.UID, err error, retries Retries) Outcome {
	o := Classify(err, retries)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !o.Stale() {
		delete(s.n, uid)
		return o
	}
	if s.n == nil {
		s.n = map[types.UID]int{}
	}
	s.n[uid]++
	n := s.n[uid]
	if n < staleLimit {
		return o
	}
	return Outcome{Synced: metav1.ConditionFalse, Reason: common.ReasonWriteConflict, EventType: corev1.EventTypeWarning,
		Message: fmt.Sprintf("%d reconciles in a row could not write what they must: %v; retrying with backoff", n, err),
		Requeue: min(time.Second<<min(n-staleLimit+1, 16), maxStaleBackoff)}
}
