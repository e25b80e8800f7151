package statelock

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func heldLease(name, who string) *coordinationv1.Lease {
	info, _ := json.Marshal(LockInfo{ID: "id-" + name, Who: who, Operation: "OperationTypeApply", Created: time.Now().Add(-time.Minute)})
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: map[string]string{LockInfoAnnotation: string(info)}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("id-" + name)},
	}
}

// TestClearStaleLock: only a lock of this host with no run in flight is released.
func TestClearStaleLock(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = coordinationv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		heldLease("ours", "me@here"), heldLease("theirs", "ci@elsewhere"), heldLease("busy", "me@here")).Build()
	ctx := context.Background()
	key := func(n string) client.ObjectKey { return client.ObjectKey{Namespace: "ns", Name: n} }

	age, err := ClearStale(ctx, c, key("ours"), "me@here", false)
	if err != nil || age < time.Minute {
		t.Fatalf("own dead lock: age %s, err %v; want released, about a minute old", age, err)
	}
	if info, _ := LockHolder(ctx, c, key("ours")); info != nil {
		t.Fatalf("own dead lock still held by %+v", info)
	}
	var stale *StaleLockError
	if _, err := ClearStale(ctx, c, key("theirs"), "me@here", false); !errors.As(err, &stale) || stale.Lock.Who != "ci@elsewhere" {
		t.Fatalf("another host's lock: err %v, want a StaleLockError naming it", err)
	}
	if _, err := ClearStale(ctx, c, key("busy"), "me@here", true); !errors.As(err, &stale) {
		t.Fatalf("lock of a run in flight: err %v, want it left alone", err)
	}
	if age, err := ClearStale(ctx, c, key("absent"), "me@here", false); err != nil || age != 0 {
		t.Fatalf("no lease: age %s, err %v", age, err)
	}
}
