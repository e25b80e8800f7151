package resource

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
