package resource

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestPatchStatusSkipsEmptyPatches: an unchanged status sends no request, guarded or not
// (a guarded patch carries the resourceVersion, which is no change); a changed one sends
// one and lands.
func TestPatchStatusSkipsEmptyPatches(t *testing.T) {
	for _, guarded := range []bool{false, true} {
		t.Run(fmt.Sprintf("guarded=%v", guarded), func(t *testing.T) { testPatchStatusSkipsEmptyPatches(t, guarded) })
	}
}

func testPatchStatusSkipsEmptyPatches(t *testing.T, guarded bool) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	patches := 0
	c := fake.NewClientBuilder().WithObjects(pod).WithStatusSubresource(pod).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	orig := got.DeepCopy()
	if err := PatchStatus(ctx, c, got, orig, guarded); err != nil || patches != 0 {
		t.Fatalf("unchanged status: %d patches, err %v; want none", patches, err)
	}
	got.Status.Message = "changed"
	if err := PatchStatus(ctx, c, got, orig, guarded); err != nil || patches != 1 {
		t.Fatalf("changed status: %d patches, err %v; want one", patches, err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil || got.Status.Message != "changed" {
		t.Errorf("status message = %q, err %v; want it written", got.Status.Message, err)
	}
}

// TestFinisherGuarded: a guarded write from a stale read loses quietly (no event, a quick
// retry); a write from the current version lands and sends its notes.
func TestFinisherGuarded(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	c := fake.NewClientBuilder().WithObjects(pod).WithStatusSubresource(pod).Build()
	rec := events.NewFakeRecorder(10)
	f := Finisher{Client: c, Recorder: RecorderFor(rec), Guarded: true}
	stale := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), stale); err != nil {
		t.Fatal(err)
	}
	current := stale.DeepCopy()
	current.Status.Message = "first"
	if err := c.Status().Update(ctx, current); err != nil {
		t.Fatal(err)
	}
	notes := []Note{{Type: corev1.EventTypeWarning, Reason: "Broken", Message: "it broke"}}
	orig := stale.DeepCopy()
	stale.Status.Message = "from a stale read"
	res, err := f.Finish(ctx, stale, orig, Outcome{Requeue: time.Hour}, notes)
	if err != nil || res.RequeueAfter != conflictRetry || len(rec.Events) != 0 {
		t.Fatalf("stale write: result %+v, err %v, %d events; want a quiet retry in %v", res, err, len(rec.Events), conflictRetry)
	}
	orig = current.DeepCopy()
	current.Status.Message = "second"
	res, err = f.Finish(ctx, current, orig, Outcome{Requeue: time.Hour}, notes)
	if err != nil || res.RequeueAfter != time.Hour || len(rec.Events) != 1 {
		t.Fatalf("current write: result %+v, err %v, %d events; want the outcome's result and one event", res, err, len(rec.Events))
	}
	gone := current.DeepCopy()
	if err := c.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	orig = current.DeepCopy()
	current.Status.Message = "third"
	if _, err := (Finisher{Client: c}).Finish(ctx, current, orig, Outcome{}, nil); err != nil {
		t.Errorf("write to a deleted object: %v; want no error", err)
	}
}

// TestEnd: End records Synced, Ready by the kind's rule and the progress conditions, then
// the kind's own status (which may refine them and the requeue), writes once and sends
// Synced's event with the kind's; a stale outcome writes nothing; Applied decides
// whether the generation counts as applied.
func TestEnd(t *testing.T) {
	ctx := context.Background()
	type obj = corev1.Pod // conditions live in the pod's status
	for _, tc := range []struct {
		name      string
		err       error
		applied   func(Outcome) bool
		wantReady metav1.ConditionStatus
		wantProg  string // Reconciling, Stalled, or "" (applied)
		wantEvent bool
		writes    int
	}{
		{name: "success", wantReady: metav1.ConditionTrue, writes: 1},
		{name: "success not applied yet", applied: func(Outcome) bool { return false }, wantReady: metav1.ConditionTrue, wantProg: "Reconciling", writes: 1},
		{name: "a user error", err: UserErrorf("Bad", "fix it"), wantReady: metav1.ConditionFalse, wantProg: "Stalled", wantEvent: true, writes: 1},
		{name: "stale", err: apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", fmt.Errorf("changed")), writes: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &obj{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: 3}}
			writes := 0
			c := fake.NewClientBuilder().WithObjects(pod).WithStatusSubresource(pod).
				WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
					writes++
					return c.SubResource(sub).Patch(ctx, o, p, opts...)
				}}).Build()
			rec := events.NewFakeRecorder(10)
			var conds []metav1.Condition
			var observed int64
			kindRan := false
			res, err := Finisher{Client: c, Recorder: RecorderFor(rec)}.End(ctx, Ending{Object: pod, Orig: pod.DeepCopy(),
				Conditions: &conds, Observed: &observed, Outcome: Classify(tc.err, Retries{Success: time.Minute, UserError: time.Hour}),
				Ready: FromOutcome(ReadyBecause("Good", "")), Applied: tc.applied,
				Status: func(o *Outcome) []Note {
					kindRan = true
					pod.Status.Message = "written" // a field of the kind's own, so that the status changes
					o.Requeue = 2 * time.Minute
					return []Note{{Type: corev1.EventTypeNormal, Reason: "Kind", Message: "the kind's"}}
				}})
			if err != nil {
				t.Fatal(err)
			}
			if writes != tc.writes {
				t.Fatalf("%d status writes, want %d", writes, tc.writes)
			}
			if tc.writes == 0 {
				if kindRan || res.RequeueAfter != time.Second {
					t.Errorf("a stale outcome ran the kind's status (%v) or requeued after %s", kindRan, res.RequeueAfter)
				}
				return
			}
			if res.RequeueAfter != 2*time.Minute {
				t.Errorf("requeue after %s, want the kind's 2m", res.RequeueAfter)
			}
			ready := findCondition(conds, "Ready")
			if ready == nil || ready.Status != tc.wantReady || ready.ObservedGeneration != 3 {
				t.Errorf("Ready = %+v, want %s at generation 3", ready, tc.wantReady)
			}
			for _, typ := range []string{"Reconciling", "Stalled"} {
				if got := findCondition(conds, typ) != nil; got != (tc.wantProg == typ) {
					t.Errorf("%s present = %v, want %v", typ, got, !got)
				}
			}
			if tc.wantProg == "" && observed != 3 {
				t.Errorf("observedGeneration %d, want 3", observed)
			}
			n := len(rec.Events)
			if want := 1 + map[bool]int{true: 1}[tc.wantEvent]; n != want {
				t.Errorf("%d events, want %d", n, want)
			}
		})
	}
}

// findCondition is conds' condition of type typ, or nil.
func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}
