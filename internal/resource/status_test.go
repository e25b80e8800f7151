package resource

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestPatchStatusSkipsEmptyPatches: an unchanged status sends no request; a changed one
// sends one and lands.
func TestPatchStatusSkipsEmptyPatches(t *testing.T) {
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
	if err := PatchStatus(ctx, c, got, orig); err != nil || patches != 0 {
		t.Fatalf("unchanged status: %d patches, err %v; want none", patches, err)
	}
	got.Status.Message = "changed"
	if err := PatchStatus(ctx, c, got, orig); err != nil || patches != 1 {
		t.Fatalf("changed status: %d patches, err %v; want one", patches, err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil || got.Status.Message != "changed" {
		t.Errorf("status message = %q, err %v; want it written", got.Status.Message, err)
	}
}
