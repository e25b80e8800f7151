package statelock

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/holder"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestHeldBy: a Lease without a holder is free; a holder without readable details is
// still held, by its id.
func TestHeldBy(t *testing.T) {
	created := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	full, _ := json.Marshal(LockInfo{ID: "abc", Operation: "apply", Who: "me@host", Created: created})
	cases := map[string]struct {
		holder     *string
		annotation string
		want       *LockInfo
	}{
		"no holder":           {nil, "", nil},
		"empty holder":        {ptr.To(""), string(full), nil},
		"holder with details": {ptr.To("abc"), string(full), &LockInfo{ID: "abc", Operation: "apply", Who: "me@host", Created: created}},
		"holder, no details":  {ptr.To("abc"), "", &LockInfo{ID: "abc"}},
		"holder, bad details": {ptr.To("abc"), "{not json", &LockInfo{ID: "abc"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lease := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: tc.holder}}
			if tc.annotation != "" {
				lease.Annotations = map[string]string{common.LockInfoAnnotation: tc.annotation}
			}
			if diff := cmp.Diff(tc.want, heldBy(lease)); diff != "" {
				t.Errorf("heldBy (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLockInfoHolder: only Info holding a Holder with an id names a Terraplane process.
func TestLockInfoHolder(t *testing.T) {
	cases := map[string]struct {
		info string
		want *holder.Holder
	}{
		"terraform's lock": {"", nil},
		"free text":        {"run by ci", nil},
		"no id":            {`{"host":"h","pid":3}`, nil},
		"a holder":         {`{"id":"x","host":"h","pid":3}`, &holder.Holder{ID: "x", Host: "h", PID: 3}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, LockInfo{Info: tc.info}.Holder()); diff != "" {
				t.Errorf("Holder (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnlock: force-unlock frees the Lease only when it still has the id asked for (or
// any, for an empty id); a free or absent Lease is no error.
func TestUnlock(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		lease    *coordinationv1.Lease
		id       string
		wantErr  string
		wantFree bool
	}{
		"absent":          {nil, "abc", "", true},
		"free":            {&coordinationv1.Lease{}, "abc", "", true},
		"held by that id": {heldLease("l", LockInfo{ID: "abc"}), "abc", "", true},
		"any holder":      {heldLease("l", LockInfo{ID: "abc"}), "", "", true},
		"held by another": {heldLease("l", LockInfo{ID: "xyz"}), "abc", "held by another run (xyz)", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = coordinationv1.AddToScheme(scheme)
			b := fake.NewClientBuilder().WithScheme(scheme)
			if tc.lease != nil {
				tc.lease.Namespace, tc.lease.Name = "ns", "l"
				b = b.WithObjects(tc.lease)
			}
			c := b.Build()
			key := client.ObjectKey{Namespace: "ns", Name: "l"}
			err := Unlock(ctx, c, key, tc.id)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Unlock = %v, want error %q", err, tc.wantErr)
			}
			info, err := LockHolder(ctx, c, key)
			if err != nil {
				t.Fatal(err)
			}
			if (info == nil) != tc.wantFree {
				t.Errorf("after Unlock held by %+v, want free %v", info, tc.wantFree)
			}
			if lease := (&coordinationv1.Lease{}); tc.wantFree && tc.lease != nil && c.Get(ctx, key, lease) == nil && lease.Annotations[common.LockInfoAnnotation] != "" {
				t.Errorf("a freed lock keeps its details: %v", lease.Annotations)
			}
		})
	}
}

// TestUnlockOnTheStateSecret: force-unlock finds a first lock on the state Secret, frees
// it only for its id, and keeps the create it records and the backend's annotations.
func TestUnlockOnTheStateSecret(t *testing.T) {
	ctx := context.Background()
	c, l := newFakeLocker()
	key := LeaseKey("ns", "sfx")
	if _, err := l.Lock(ctx, key, "sfx", "apply", true); err != nil {
		t.Fatal(err) // and never released
	}
	info, err := LockHolder(ctx, c, key)
	if err != nil || info == nil {
		t.Fatalf("the first lock is not found: %+v, %v", info, err)
	}
	if err := Unlock(ctx, c, key, "another"); err == nil || !strings.Contains(err.Error(), "held by another run") {
		t.Fatalf("Unlock of another id = %v, want refused", err)
	}
	if err := Unlock(ctx, c, key, info.ID); err != nil {
		t.Fatal(err)
	}
	r, err := ReadLock(ctx, c, key)
	if err != nil || r.Holder != nil || !r.CreatePending {
		t.Fatalf("after Unlock: %+v, %v; want free, the create still recorded", r, err)
	}
	var state corev1.Secret
	if err := c.Get(ctx, stateKey(key), &state); err != nil || state.Annotations["encoding"] != "gzip" || len(state.Data["tfstate"]) == 0 {
		t.Fatalf("the state Secret after Unlock: %v, %v", state.Annotations, err)
	}
	if lease, err := getLease(ctx, c, key); err != nil || lease != nil {
		t.Errorf("Unlock made a Lease (%v)", err)
	}
}

// TestLockTakenMeanwhile: when another process takes the lock between the read and the
// write that takes it (seeding the state Secret, or making the Lease), Lock says who
// holds it instead of failing.
func TestLockTakenMeanwhile(t *testing.T) {
	ctx := context.Background()
	other := holder.Holder{ID: "other", Host: "elsewhere", PID: 1, Expires: time.Now().Add(time.Hour)}
	info := lockOf(&other)
	for _, stateExists := range []bool{false, true} {
		scheme := runtime.NewScheme()
		_ = coordinationv1.AddToScheme(scheme)
		_ = corev1.AddToScheme(scheme)
		raced := false
		b := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if !raced {
					raced = true
					theirs := obj.DeepCopyObject().(client.Object)
					stamp(record{theirs}, info, false)
					if err := c.Create(ctx, theirs); err != nil {
						return err
					}
				}
				return c.Create(ctx, obj, opts...)
			}})
		if stateExists {
			b = b.WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tfstate-default-sfx"}})
		}
		l := NewLocker(b.Build(), nil, time.Hour, time.Minute)
		l.reader = l.client
		_, err := l.Lock(ctx, LeaseKey("ns", "sfx"), "sfx", "apply", false)
		var held *HeldError
		if !errors.As(err, &held) || held.Holder.ID != "other" {
			t.Fatalf("state there %v: Lock = %v, want a HeldError naming the other process", stateExists, err)
		}
	}
}

// TestSeedEmptySecret: a state Secret that exists without a state gets one written in.
func TestSeedEmptySecret(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	existing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tfstate-default-abc"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(existing).Build()
	if err := NewLocker(c, c, time.Hour, time.Minute).SeedState(ctx, map[string]string{"namespace": "ns", "secret_suffix": "abc"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(existing), existing); err != nil || len(existing.Data["tfstate"]) == 0 {
		t.Errorf("state after seeding: %v, %v; want one written", existing.Data, err)
	}
}

// TestErrorMessages: the errors name the holder, what it runs and the way out.
func TestErrorMessages(t *testing.T) {
	lock := LockInfo{ID: "abc", Operation: "apply", Who: "ana@laptop", Created: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}
	stale := (&StaleLockError{Lock: lock}).Error()
	for _, want := range []string{"ana@laptop", "apply", "2024-05-06T07:08:09Z", "abc", "terraplane unlock"} {
		if !strings.Contains(stale, want) {
			t.Errorf("StaleLockError %q lacks %q", stale, want)
		}
	}
	held := (&HeldError{Lock: lock, Holder: holder.Holder{ID: "h1", PodName: "p", PodNamespace: "n"}}).Error()
	for _, want := range []string{"terraplane h1 (pod n/p)", "apply", "waiting"} {
		if !strings.Contains(held, want) {
			t.Errorf("HeldError %q lacks %q", held, want)
		}
	}
}

// TestLockExpiresAfterItsCommand: a lock records when no command under it can still run:
// the deadline of its command (a resource's own spec.timeout, say, longer than the
// default) and the grace after it; a command without a deadline gets the locker's hold.
func TestLockExpiresAfterItsCommand(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = coordinationv1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	now := time.Now()
	for name, tc := range map[string]struct {
		deadline time.Duration // 0: none
		want     time.Duration // from now
	}{
		"a 3h timeout":        {3 * time.Hour, 3*time.Hour + 2*time.Minute},
		"a 1m timeout":        {time.Minute, 3 * time.Minute},
		"no deadline at all":  {0, 30 * time.Minute},
		"the default timeout": {20 * time.Minute, 22 * time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme).Build()
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, now.Add(tc.deadline))
				defer cancel()
			}
			unlock, err := NewLocker(c, c, 30*time.Minute, 2*time.Minute).Lock(ctx, LeaseKey("ns", "sfx"), "sfx", "apply", false)
			if err != nil {
				t.Fatal(err)
			}
			defer unlock(true)
			lock, err := LockHolder(ctx, c, LeaseKey("ns", "sfx"))
			if err != nil || lock == nil || lock.Holder() == nil {
				t.Fatalf("lock %+v, err %v", lock, err)
			}
			if got := lock.Holder().Expires.Sub(now); got < tc.want-time.Second || got > tc.want+time.Second {
				t.Errorf("expires %s after the lock was taken, want %s", got.Round(time.Second), tc.want)
			}
		})
	}
}
