package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
)

// readyWatch records when each claim of a run turns Ready. It watches rather than polls:
// the times are exact, as the yardstick's are, and measuring puts no load of its own on
// the API server that the run depends on. It reads the watch from the moment the run
// starts, while the claims are still being created: a claim's time is when its Ready
// arrived, not when the last claim had been created.
type readyWatch struct {
	w       client.WithWatch
	start   time.Time
	watch   watch.Interface // follow's, once begun
	changed chan struct{}   // a claim turned Ready, or the watch failed
	stop    context.CancelFunc

	mu      sync.Mutex
	readyAt map[string]time.Duration
	err     error
}

// watchReady opens the watch; open it before the claims are created, then call begin.
func (h *harness) watchReady(ctx context.Context) (*readyWatch, error) {
	rw := &readyWatch{w: h.w, readyAt: map[string]time.Duration{}, changed: make(chan struct{}, 1)}
	return rw, rw.open(ctx)
}

// begin sets the run's start and reads the watch from then on, until wait returns, ctx
// ends or the watch fails for good.
func (rw *readyWatch) begin(ctx context.Context, start time.Time) {
	rw.start = start
	ctx, rw.stop = context.WithCancel(ctx)
	go rw.follow(ctx)
}

// open lists the claims (recording those already Ready) and watches from that list on.
func (rw *readyWatch) open(ctx context.Context) error {
	list := &storagev1.BucketList{}
	if err := rw.w.List(ctx, list, client.InNamespace(appNS)); err != nil {
		return fmt.Errorf("list claims: %w", err)
	}
	for i := range list.Items {
		rw.observe(&list.Items[i])
	}
	w, err := rw.w.Watch(ctx, &storagev1.BucketList{}, client.InNamespace(appNS),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return fmt.Errorf("watch claims: %w", err)
	}
	rw.watch = w
	return nil
}

// follow records each claim's Ready as it arrives; a watch the server ends is opened
// again from a fresh list.
func (rw *readyWatch) follow(ctx context.Context) {
	defer func() { rw.watch.Stop() }()
	for {
		select {
		case ev, ok := <-rw.watch.ResultChan():
			if !ok {
				if ctx.Err() != nil {
					return
				}
				if err := rw.open(ctx); err != nil {
					rw.mu.Lock()
					rw.err = err
					rw.mu.Unlock()
					rw.signal()
					return
				}
				continue
			}
			if b, isBucket := ev.Object.(*storagev1.Bucket); isBucket && ev.Type != watch.Deleted {
				rw.observe(b)
			}
		case <-ctx.Done():
			return
		}
	}
}

func (rw *readyWatch) observe(b *storagev1.Bucket) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if _, seen := rw.readyAt[b.Name]; !seen && meta.IsStatusConditionTrue(b.Status.Conditions, common.TypeReady) {
		rw.readyAt[b.Name] = time.Since(rw.start)
		rw.signal()
	}
}

// readyCount is how many claims are Ready so far.
func (rw *readyWatch) readyCount() int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return len(rw.readyAt)
}

// signal wakes wait, without blocking.
func (rw *readyWatch) signal() {
	select {
	case rw.changed <- struct{}{}:
	default:
	}
}

// wait returns when each of names became Ready, relative to start.
func (rw *readyWatch) wait(ctx context.Context, names []string) ([]time.Duration, error) {
	defer rw.stop() // follow stops its watch
	// 30 minutes, and 0.2 s more per claim: 63 minutes at 10,000
	wait := 30*time.Minute + time.Duration(len(names))*200*time.Millisecond
	deadline := time.After(wait)
	for {
		rw.mu.Lock()
		done, err := rw.allReady(names), rw.err
		rw.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
		select {
		case <-rw.changed:
		case <-deadline:
			rw.mu.Lock()
			defer rw.mu.Unlock()
			return nil, fmt.Errorf("only %d of %d claims became Ready within %s", len(rw.readyAt), len(names), wait)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	out := make([]time.Duration, 0, len(names))
	for _, n := range names {
		out = append(out, rw.readyAt[n])
	}
	return out, nil
}

// allReady reports whether each of names has turned Ready; rw.mu is held.
func (rw *readyWatch) allReady(names []string) bool {
	for _, n := range names {
		if _, ok := rw.readyAt[n]; !ok {
			return false
		}
	}
	return true
}
