package statelock

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/holder"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func lockOf(h *holder.Holder) LockInfo {
	l := LockInfo{ID: "lock", Operation: "apply", Who: "someone@somewhere", Created: time.Now().Add(-time.Minute)}
	if h != nil {
		b, _ := json.Marshal(h)
		l.Info = string(b)
	}
	return l
}

// TestJudge: a lock is released only when its holder is provably gone.
func TestJudge(t *testing.T) {
	now := time.Now()
	self := holder.Holder{ID: "self", Boot: "b", PIDNamespace: "pid:[1]", PID: 10, Start: 100}
	other := holder.Holder{ID: "other", Boot: "b", PIDNamespace: "pid:[1]", PID: 11, Start: 110, Expires: now.Add(time.Hour)}
	expired := other
	expired.Expires = now.Add(-time.Second)
	gone := func(h holder.Holder) bool { return h.ID == "dead" }
	dead := other
	dead.ID = "dead"
	for _, tc := range []struct {
		name string
		lock LockInfo
		busy bool
		want verdict
	}{
		{"terraform's own lock, a person's say", lockOf(nil), false, foreign},
		{"this process, a run in flight", lockOf(&self), true, wait},
		{"this process, nothing in flight", lockOf(&self), false, release},
		{"another live process", lockOf(&other), false, wait},
		{"another process past its deadline", lockOf(&expired), false, release},
		{"another process, provably gone", lockOf(&dead), false, release},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := judge(tc.lock, self, tc.busy, now, gone); got != tc.want {
				t.Errorf("judge = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestGone: holders on this machine are judged by their process, pods by the Pod.
func TestGone(t *testing.T) {
	self := holder.Self()
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	live := self
	live.ID = "another process on this machine"
	live.PID = os.Getppid()
	live.Start, _ = holder.ProcessStart(live.PID)
	reused := live
	reused.Start++ // the pid now names a process started later
	dead := self
	dead.ID, dead.PID = "exited", exited.Process.Pid
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "sys", Name: "ctl-1", UID: types.UID("uid-1")}}
	l := &Locker{reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod).Build(), self: holder.Holder{ID: "me", Pod: "uid-me", Boot: "x", PIDNamespace: "y"}}
	local := &Locker{self: self}
	for _, tc := range []struct {
		name   string
		locker *Locker
		h      holder.Holder
		want   bool
	}{
		{"a running process of this machine", local, live, false},
		{"a process that exited", local, dead, true},
		{"a pid reused by a later process", local, reused, true},
		{"an earlier container of this pod", l, holder.Holder{ID: "before", Pod: "uid-me"}, true},
		{"a pod that exists", l, holder.Holder{ID: "p", Pod: "uid-1", PodName: "ctl-1", PodNamespace: "sys"}, false},
		{"a pod that is gone", l, holder.Holder{ID: "p", Pod: "uid-2", PodName: "ctl-2", PodNamespace: "sys"}, true},
		{"a pod replaced under the same name", l, holder.Holder{ID: "p", Pod: "uid-0", PodName: "ctl-1", PodNamespace: "sys"}, true},
		{"another machine, no pod", l, holder.Holder{ID: "p", Boot: "elsewhere", PID: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.locker.gone(context.Background())(tc.h); got != tc.want {
				t.Errorf("gone = %v, want %v", got, tc.want)
			}
		})
	}
}

func heldLease(name string, info LockInfo) *coordinationv1.Lease {
	raw, _ := json.Marshal(info)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: map[string]string{common.LockInfoAnnotation: string(raw)}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(info.ID)},
	}
}

// newFakeLocker is a locker of this process over a fake client that keeps Leases and
// Secrets.
func newFakeLocker() (client.Client, *Locker) {
	scheme := runtime.NewScheme()
	_ = coordinationv1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	return c, NewLocker(c, c, time.Hour, time.Minute)
}

// TestLocker: a lock is taken once, names this process, is refused to a second taker
// while held, and released by its unlock; ClearStale releases only provably dead locks.
func TestLocker(t *testing.T) {
	c, l := newFakeLocker()
	ctx := context.Background()
	self := l.self
	mine := self
	mine.Expires = time.Now().Add(time.Hour)
	other := mine
	other.ID, other.PID = "other", os.Getppid()
	other.Start, _ = holder.ProcessStart(other.PID)
	sibling := mine
	sibling.ID = "another controller of this process"
	for _, lease := range []*coordinationv1.Lease{heldLease("foreign", lockOf(nil)), heldLease("live", lockOf(&other)),
		heldLease("mine", lockOf(&mine)), heldLease("sibling", lockOf(&sibling))} {
		if err := c.Create(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}
	key := func(n string) client.ObjectKey { return client.ObjectKey{Namespace: "ns", Name: n} }

	unlock, err := l.Lock(ctx, key("new"), "sfx", "apply", false)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := LockHolder(ctx, c, key("new"))
	if info == nil || info.Holder() == nil || info.Holder().ID != self.ID || info.Operation != "apply" {
		t.Fatalf("lock taken: %+v, want one naming this process", info)
	}
	if info.Holder().ID != l.HolderID() {
		t.Errorf("the lock names holder %q, HolderID (what marks its terraform processes) is %q", info.Holder().ID, l.HolderID())
	}
	var held *HeldError
	if _, err := l.Lock(ctx, key("new"), "sfx", "plan", false); !errors.As(err, &held) {
		t.Fatalf("second lock: %v, want a HeldError", err)
	}
	unlock(true)
	if info, _ := LockHolder(ctx, c, key("new")); info != nil {
		t.Fatalf("after unlock: held by %+v", info)
	}
	if unlock, err = l.Lock(ctx, key("new"), "sfx", "plan", false); err != nil {
		t.Fatalf("lock again: %v", err)
	}
	unlock(true)

	var stale *StaleLockError
	if _, err := l.ClearStale(ctx, key("foreign"), false, false); !errors.As(err, &stale) {
		t.Fatalf("a lock terraform took: %v, want a StaleLockError (never released by itself)", err)
	}
	if _, err := l.ClearStale(ctx, key("live"), false, false); !errors.As(err, &held) {
		t.Fatalf("a live process's lock: %v, want a HeldError", err)
	}
	if _, err := l.ClearStale(ctx, key("sibling"), false, false); !errors.As(err, &held) {
		t.Fatalf("the lock of another controller in this process: %v, want a HeldError", err)
	}
	if _, err := l.ClearStale(ctx, key("mine"), true, false); !errors.As(err, &held) {
		t.Fatalf("this process's lock with a run in flight: %v, want a HeldError", err)
	}
	if rel, err := l.ClearStale(ctx, key("mine"), false, false); err != nil || rel.Age < time.Minute || rel.CreatePending {
		t.Fatalf("this process's lock, nothing in flight: %+v, err %v; want released", rel, err)
	}
	if rel, err := l.ClearStale(ctx, key("absent"), false, false); err != nil || rel != (Released{}) {
		t.Fatalf("no lease: %+v, err %v", rel, err)
	}
}

// TestSeedState: a workspace without state gets an empty one, in the backend's format;
// one with a state keeps it.
func TestSeedState(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	l := NewLocker(c, c, time.Hour, time.Minute)
	ctx := context.Background()
	backend := map[string]string{"namespace": "ns", "secret_suffix": "abc"}
	if err := l.SeedState(ctx, backend); err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "tfstate-default-abc"}, &s); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(s.Data["tfstate"]))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Version   int             `json:"version"`
		Lineage   string          `json:"lineage"`
		Resources json.RawMessage `json:"resources"`
	}
	if err := json.NewDecoder(zr).Decode(&st); err != nil || st.Version != 4 || st.Lineage == "" || string(st.Resources) != "[]" {
		t.Fatalf("seeded state %+v, %v; want an empty version 4 state with a lineage", st, err)
	}
	if s.Labels["tfstate"] != "true" || s.Labels["tfstateSecretSuffix"] != "abc" || s.Annotations["encoding"] != "gzip" {
		t.Errorf("seeded Secret labels %v, annotations %v; want the backend's", s.Labels, s.Annotations)
	}
	s.Data["tfstate"] = []byte("kept")
	if err := c.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
	if err := l.SeedState(ctx, backend); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(&s), &s); err != nil || string(s.Data["tfstate"]) != "kept" {
		t.Errorf("a state that exists was written over: %q", s.Data["tfstate"])
	}
}

// TestEmptyStatesFromReusedWriters: empty states made at once, through the reused gzip
// writers, each unzip whole, each with its own lineage.
func TestEmptyStatesFromReusedWriters(t *testing.T) {
	const n = 50
	states := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { states[i], errs[i] = newEmptyState() })
	}
	wg.Wait()
	lineages := map[string]bool{}
	for i, raw := range states {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Lineage string `json:"lineage"`
		}
		if err := json.NewDecoder(zr).Decode(&st); err != nil || st.Lineage == "" {
			t.Fatalf("state %d: %q, %v", i, st.Lineage, err)
		}
		lineages[st.Lineage] = true
	}
	if len(lineages) != n {
		t.Errorf("%d states share %d lineages", n, len(lineages))
	}
}

// failingUpdates fails every Update and Patch while failing is set, as an API server out
// of reach.
type failingUpdates struct {
	client.Client
	failing atomic.Bool
}

func (f *failingUpdates) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if f.failing.Load() {
		return errors.New("connection refused")
	}
	return f.Client.Update(ctx, obj, opts...)
}

func (f *failingUpdates) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if f.failing.Load() {
		return errors.New("connection refused")
	}
	return f.Client.Patch(ctx, obj, patch, opts...)
}

// TestUnlockRetriesUntilItLands: a release that fails while the API server is out of
// reach is tried again until it lands, so the lock does not wait for its deadline: the
// first lock, kept on the state Secret, and a later one, on the Lease.
func TestUnlockRetriesUntilItLands(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = coordinationv1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	c := &failingUpdates{Client: fake.NewClientBuilder().WithScheme(scheme).Build()}
	l := NewLocker(c, c, time.Hour, time.Minute)
	ctx := context.Background()
	key := LeaseKey("ns", "sfx")
	for _, on := range []string{"state Secret", "Lease"} {
		unlock, err := l.Lock(ctx, key, "sfx", "apply", false)
		if err != nil {
			t.Fatal(err)
		}
		c.failing.Store(true)
		unlock(true) // fails, and goes on trying
		if info, _ := LockHolder(ctx, c, key); info == nil {
			t.Fatalf("the lock on the %s released while updates fail", on)
		}
		c.failing.Store(false)
		deadline := time.Now().Add(3 * unlockRetry)
		for {
			if info, _ := LockHolder(ctx, c, key); info == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the release of the lock on the %s was not tried again once the API server answered", on)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if lease, _ := getLease(ctx, c, key); lease == nil {
		t.Error("the second lock was not kept on the Lease")
	}
}

// TestLeftoversStopBeforeRelease: a dead holder's lock is free only once what its runs
// left running on this machine has stopped: a provisioner shell that outlived its killed
// terraform would otherwise go on creating after the next run (or a destroy) took over.
// Processes of other holders are left alone.
func TestLeftoversStopBeforeRelease(t *testing.T) {
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	dead := holder.Self()
	dead.ID, dead.PID = "a-dead-holder", exited.Process.Pid
	start := func(id string) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), holder.Env+"="+id)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	leftover, other := start(dead.ID), start("a-live-holder")
	waited := make(chan error, 1)
	go func() { waited <- leftover.Wait() }()
	if !(&Locker{self: holder.Self()}).gone(context.Background())(dead) {
		t.Fatal("a dead holder whose leftovers were stopped is not gone")
	}
	select {
	case <-waited:
	case <-time.After(2 * time.Second):
		t.Fatal("the dead holder's leftover process still runs after its lock was judged free")
	}
	began, err := holder.ProcessStart(other.Process.Pid)
	if live := (holder.Holder{PID: other.Process.Pid, Start: began}); err != nil || !live.Running() {
		t.Errorf("another holder's process was stopped: %v", err)
	}
}

// TestCreateRecordOnTheLock: a lock taken for a create records it on the lock in the
// same write; a settled release drops the record with the lock, an unsettled one (the
// outcome unknown) keeps it, as does a run cut off holding the lock. ClearStale reports
// the record, writing nothing for a free lock, until the caller says the resource
// records it; only then does it go. A plain lock's release never drops it. The same
// holds for the first lock, kept on the state Secret, and for the Lease.
func TestCreateRecordOnTheLock(t *testing.T) {
	for _, onLease := range []bool{false, true} {
		t.Run(map[bool]string{false: "state Secret", true: "Lease"}[onLease], func(t *testing.T) {
			c, l := newFakeLocker()
			ctx := context.Background()
			key := LeaseKey("ns", "sfx")
			if onLease { // a workspace with a state takes its first lock on the Lease
				if err := l.SeedState(ctx, map[string]string{"namespace": "ns", "secret_suffix": "sfx"}); err != nil {
					t.Fatal(err)
				}
			}
			kept := func() (ann map[string]string, held bool, version string) {
				t.Helper()
				rs, err := readRecords(ctx, c, key)
				if err != nil {
					t.Fatal(err)
				}
				if (rs.lease != nil) != onLease {
					t.Fatalf("a Lease %v, want %v", rs.lease != nil, onLease)
				}
				var obj client.Object = rs.state
				if rs.lease != nil {
					obj = rs.lease
				}
				return obj.GetAnnotations(), (record{obj}).held() != nil, obj.GetResourceVersion()
			}
			recorded := func() bool { ann, _, _ := kept(); return ann[common.CreatePendingAnnotation] != "" }
			held := func() bool { _, h, _ := kept(); return h }
			lock := func(create bool) func(bool) {
				t.Helper()
				unlock, err := l.Lock(ctx, key, "sfx", "apply", create)
				if err != nil {
					t.Fatal(err)
				}
				return unlock
			}

			unlock := lock(true)
			if !recorded() || !held() {
				t.Fatal("a create's lock records the create with the holder")
			}
			if unlock(false); !recorded() || held() {
				t.Fatal("an unsettled release frees the lock and keeps the create's record")
			}
			lock(false)(true)
			if !recorded() {
				t.Fatal("a plain lock's release dropped a create's record")
			}
			_, _, rv := kept()
			if rel, err := l.ClearStale(ctx, key, false, false); err != nil || rel != (Released{CreatePending: true}) {
				t.Fatalf("a free lock with a create's record: %+v, %v; want the record reported", rel, err)
			}
			if _, _, now := kept(); now != rv {
				t.Error("reporting the record of a free lock wrote it")
			}
			if rel, err := l.ClearStale(ctx, key, false, true); err != nil || rel != (Released{}) || recorded() {
				t.Fatalf("recorded by the resource: %+v, %v, still on the lock %v; want it dropped", rel, err, recorded())
			}
			if !onLease {
				return // the next lock is the Lease's: the case below
			}
			if unlock := lock(true); !recorded() || !held() {
				t.Fatal("a create's lock records the create with the holder")
			} else if unlock(true); recorded() || held() {
				t.Fatal("a settled release drops the record with the lock")
			}
			lock(true) // a run cut off: the lock stays held by this process, idle now
			rel, err := l.ClearStale(ctx, key, false, false)
			if err != nil || rel.Age == 0 || !rel.CreatePending {
				t.Fatalf("a create cut off: %+v, %v; want the lock released and the create reported", rel, err)
			}
			if !recorded() || held() {
				t.Fatal("releasing the lock of a create cut off keeps the create's record")
			}
			if _, err := l.ClearStale(ctx, key, false, true); err != nil || recorded() {
				t.Fatalf("once recorded by the resource: %v, still on the lock %v", err, recorded())
			}
		})
	}
}

// TestFirstLockSeedsTheState: a workspace's first lock is taken in the one write that
// seeds its empty state; another taker is refused; terraform writes its state under it;
// the release writes the Secret's metadata only, keeping that state; the next lock is
// the Lease's. A create cut off on its first lock leaves the lock and its record on the
// state Secret, for ClearStale.
func TestFirstLockSeedsTheState(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = coordinationv1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	var writes []string
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			writes = append(writes, fmt.Sprintf("create %T", obj))
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			writes = append(writes, fmt.Sprintf("update %T", obj))
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes = append(writes, fmt.Sprintf("patch %T", obj))
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()
	l := NewLocker(c, c, time.Hour, time.Minute)
	ctx := context.Background()
	key := LeaseKey("ns", "sfx")
	state := func() *corev1.Secret {
		t.Helper()
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "tfstate-default-sfx"}, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}

	unlock, err := l.Lock(ctx, key, "sfx", "apply", true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"create *v1.Secret"}; !slices.Equal(writes, want) {
		t.Fatalf("first lock wrote %v, want %v", writes, want)
	}
	seeded := state()
	if len(seeded.Data["tfstate"]) == 0 || seeded.Labels["tfstateSecretSuffix"] != "sfx" || !keepsLock(seeded.Annotations) {
		t.Fatalf("the first lock's Secret: labels %v, annotations %v, %d bytes of state; want an empty state with the lock", seeded.Labels, seeded.Annotations, len(seeded.Data["tfstate"]))
	}
	var held *HeldError
	other := NewLocker(c, c, time.Hour, time.Minute)
	if _, err := other.Lock(ctx, key, "sfx", "plan", false); !errors.As(err, &held) {
		t.Fatalf("another process's lock: %v, want a HeldError", err)
	}
	seeded.Data["tfstate"] = []byte("terraform's state") // terraform writes its state meanwhile
	if err := c.Update(ctx, seeded); err != nil {
		t.Fatal(err)
	}
	writes = nil
	unlock(true)
	after := state()
	if !slices.Equal(writes, []string{"patch *v1.PartialObjectMetadata"}) || string(after.Data["tfstate"]) != "terraform's state" || keepsLock(after.Annotations) {
		t.Fatalf("release wrote %v, state %q, annotations %v; want one metadata patch, the state kept, the lock gone", writes, after.Data["tfstate"], after.Annotations)
	}
	if after.Annotations["encoding"] != "gzip" {
		t.Errorf("release dropped the backend's annotations: %v", after.Annotations)
	}
	unlock, err = other.Lock(ctx, key, "sfx", "plan", false)
	if err != nil {
		t.Fatal(err)
	}
	if lease, _ := getLease(ctx, c, key); lease == nil || heldBy(lease) == nil {
		t.Fatal("a later lock is not kept on the Lease")
	}
	unlock(true)

	cut := LeaseKey("ns", "cut")
	if _, err := l.Lock(ctx, cut, "cut", "apply", true); err != nil { // then cut off
		t.Fatal(err)
	}
	rel, err := l.ClearStale(ctx, cut, false, false)
	if err != nil || !rel.CreatePending || rel.Age == 0 {
		t.Fatalf("a first create cut off: %+v, %v; want its lock released and the create reported", rel, err)
	}
}

// TestReleaseAsTheStateWasLastSeen: a first lock, kept on the state Secret, is released
// as the caller last saw the Secret (the proxy saw terraform write it), without reading
// it again; a state older than the Secret's latest, another Secret's, one that does not
// record this lock, or none at all, has the release read the Secret first; the lock is
// freed and the state kept every time.
func TestReleaseAsTheStateWasLastSeen(t *testing.T) {
	for _, tc := range []struct {
		name string
		// state is what the release is told, from the Secret as terraform's write left it
		state func(written *corev1.Secret) []byte
		reads int
	}{
		{name: "the latest", state: func(s *corev1.Secret) []byte { return secretJSON(s) }},
		{name: "an older version", reads: 1, state: func(s *corev1.Secret) []byte {
			s.ResourceVersion = "1"
			return secretJSON(s)
		}},
		{name: "another Secret", reads: 1, state: func(s *corev1.Secret) []byte {
			s.Name = "tfstate-default-other"
			return secretJSON(s)
		}},
		{name: "without this lock", reads: 1, state: func(s *corev1.Secret) []byte {
			delete(s.Annotations, common.LockInfoAnnotation)
			return secretJSON(s)
		}},
		{name: "not JSON", reads: 1, state: func(*corev1.Secret) []byte { return []byte("{") }},
		{name: "nothing", reads: 1, state: func(*corev1.Secret) []byte { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = coordinationv1.AddToScheme(scheme)
			_ = corev1.AddToScheme(scheme)
			var reads int
			var c client.Client = fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					reads++
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build()
			l := NewLocker(c, c, time.Hour, time.Minute)
			ctx := context.Background()
			backend := map[string]string{"namespace": "ns", "secret_suffix": "sfx"}
			unlock, seeded, err := l.LockState(ctx, backend, "apply", true)
			if err != nil {
				t.Fatal(err)
			}
			var written corev1.Secret
			if err := json.Unmarshal(seeded, &written); err != nil || !keepsLock(written.Annotations) {
				t.Fatalf("the seeded state %s: %v; want the Secret with its lock", seeded, err)
			}
			written.Data["tfstate"] = []byte("terraform's state") // terraform writes its state
			if err := c.Update(ctx, &written); err != nil {
				t.Fatal(err)
			}
			reads = 0
			unlock(true, tc.state(written.DeepCopy()))
			if reads != tc.reads {
				t.Errorf("the release read %d objects, want %d", reads, tc.reads)
			}
			var after corev1.Secret
			if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "tfstate-default-sfx"}, &after); err != nil {
				t.Fatal(err)
			}
			if keepsLock(after.Annotations) || string(after.Data["tfstate"]) != "terraform's state" {
				t.Errorf("after the release: annotations %v, state %q; want the lock and the create's record gone, the state kept", after.Annotations, after.Data["tfstate"])
			}
		})
	}
}
