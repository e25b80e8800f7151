package main

import (
	"context"
	"fmt"
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
// the API server that the run depends on.
type readyWatch struct {
	w       client.WithWatch
	start   time.Time
	readyAt map[string]time.Duration
	watch   watch.Interface
}

// watchReady opens the watch; open it before the claims are created, then set start.
func (h *harness) watchReady(ctx context.Context) (*readyWatch, error) {
	rw := &readyWatch{w: h.w, readyAt: map[string]time.Duration{}}
	return rw, rw.open(ctx)
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

func (rw *readyWatch) observe(b *storagev1.Bucket) {
	if _, seen := rw.readyAt[b.Name]; !seen && meta.IsStatusConditionTrue(b.Status.Conditions, common.TypeReady) {
		rw.readyAt[b.Name] = time.Since(rw.start)
	}
}

// wait returns when each of names became Ready, relative to start.
func (rw *readyWatch) wait(ctx context.Context, names []string) ([]time.Duration, error) {
	defer func() { rw.watch.Stop() }()
	deadline := time.After(30 * time.Minute)
	for !rw.allReady(names) {
		select {
		case ev, ok := <-rw.watch.ResultChan():
			if !ok { // the server ended the watch: pick up from a fresh list
				if err := rw.open(ctx); err != nil {
					return nil, err
				}
				continue
			}
			if b, isBucket := ev.Object.(*storagev1.Bucket); isBucket && ev.Type != watch.Deleted {
				rw.observe(b)
			}
		case <-deadline:
			return nil, fmt.Errorf("only %d of %d claims became Ready within 30 minutes", len(rw.readyAt), len(names))
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	out := make([]time.Duration, 0, len(names))
	for _, n := range names {
		out = append(out, rw.readyAt[n])
	}
	return out, nil
}

func (rw *readyWatch) allReady(names []string) bool {
	for _, n := range names {
		if _, ok := rw.readyAt[n]; !ok {
			return false
		}
	}
	return true
}
