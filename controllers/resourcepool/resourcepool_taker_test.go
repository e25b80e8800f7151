package resourcepool

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/resourcepool"
)

// TestForMember: a claim queues the pool it is a member of and the pool it was filled
// from (its deletion makes room there); a malformed fill mark queues nothing.
func TestForMember(t *testing.T) {
	for name, tc := range map[string]struct {
		labels, annotations map[string]string
		want                []reconcile.Request
	}{
		"a member": {labels: map[string]string{common.PoolLabel: "warm"},
			want: []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "team", Name: "warm"}}}},
		"filled from a pool": {annotations: map[string]string{common.PoolMemberAnnotation: "cold/cold-x/uid-1"},
			want: []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "team", Name: "cold"}}}},
		"a member filled from another": {labels: map[string]string{common.PoolLabel: "warm"},
			annotations: map[string]string{common.PoolMemberAnnotation: "cold/cold-x/uid-1"},
			want: []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "team", Name: "warm"}},
				{NamespacedName: types.NamespacedName{Namespace: "team", Name: "cold"}}}},
		"a malformed fill":  {annotations: map[string]string{common.PoolMemberAnnotation: "cold//uid-1"}},
		"nothing of a pool": {},
	} {
		t.Run(name, func(t *testing.T) {
			b := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "b", Labels: tc.labels, Annotations: tc.annotations}}
			if d := cmp.Diff(tc.want, forMember(context.Background(), b)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestTaker: a hand-out is done once the claim records the member; it is undone when
// the claim is gone, is another claim of the same name, took another member, or is
// going without a resource; a claim still being handed over, or going with the member's
// resource bound, still wants it.
func TestTaker(t *testing.T) {
	m := resourcepool.Member{Name: "warm-1", UID: "m-1", TakenBy: resourcepool.Taker{Name: "orders", UID: "c-1"}}
	claim := func(uid types.UID, fill string, deleting, bound bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
		u.SetName("orders")
		u.SetUID(uid)
		if fill != "" {
			u.SetAnnotations(map[string]string{common.PoolMemberAnnotation: fill})
		}
		if deleting {
			now := metav1.Now()
			u.SetDeletionTimestamp(&now)
		}
		if bound {
			u.Object["spec"].(map[string]any)["resourceRef"] = map[string]any{"name": "bucket-m-1"}
		}
		return u
	}
	for name, tc := range map[string]struct {
		claim       *unstructured.Unstructured
		done, alive bool
	}{
		"claim gone":                      {nil, false, false},
		"another claim of the name":       {claim("c-2", "", false, false), false, false},
		"records the member":              {claim("c-1", "warm/warm-1/m-1", false, false), true, true},
		"took another member":             {claim("c-1", "warm/warm-2/m-2", false, false), false, false},
		"being handed over":               {claim("c-1", "", false, false), false, true},
		"going without a resource":        {claim("c-1", "", true, false), false, false},
		"going with the resource bound":   {claim("c-1", "", true, true), false, true},
		"a malformed fill, still wanting": {claim("c-1", "warm/warm-1", false, false), false, true},
	} {
		t.Run(name, func(t *testing.T) {
			p := &pass{claims: map[string]*unstructured.Unstructured{}}
			if tc.claim != nil {
				p.claims["orders"] = tc.claim
			}
			r := &Reconciler{}
			if done, alive := r.taker(p, m); done != tc.done || alive != tc.alive {
				t.Errorf("taker = done %v, alive %v; want %v, %v", done, alive, tc.done, tc.alive)
			}
		})
	}
}

// TestReconcileGoneOrGoing: a pool that is gone, or is being deleted (its members go
// with it), is nothing to do: no error, no member made.
func TestReconcileGoneOrGoing(t *testing.T) {
	r, _, _ := poolReconciler(t)
	var c client.Client
	if res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "warm"}}); err != nil || res != (ctrl.Result{}) {
		t.Errorf("a pool that is gone: %+v, %v", res, err)
	}
	going := bucketPool(3)
	now := metav1.Now()
	going.DeletionTimestamp, going.Finalizers = &now, []string{"test/hold"}
	r, c, _ = poolReconciler(t, going)
	if res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(going)}); err != nil || res != (ctrl.Result{}) {
		t.Errorf("a pool being deleted: %+v, %v", res, err)
	}
	if ms := members(t, c); len(ms) != 0 {
		t.Errorf("a pool being deleted made %d members", len(ms))
	}
}
