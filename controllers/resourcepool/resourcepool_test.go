package resourcepool

import (
	"context"
	"fmt"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/resourcepool"
)

func bucketPool(size int32) *scalingv1.ResourcePool {
	return &scalingv1.ResourcePool{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "warm", UID: "pool-uid", Generation: 1},
		Spec: scalingv1.ResourcePoolSpec{Size: size, ClaimTemplate: scalingv1.ClaimTemplate{
			APIVersion: storagev1.GroupVersion.String(), Kind: "Bucket", Labels: map[string]string{"team": "a"},
			Spec: &apiextensionsv1.JSON{Raw: []byte(`{"classRef":{"name":"fast"},"versioning":true}`)}}}}
}

// member is a Bucket of pool "warm", Ready or not, bound to an S3Bucket made for it.
func member(i int, ready bool) (*storagev1.Bucket, *awsstoragev1.S3Bucket) {
	uid := types.UID(fmt.Sprintf("m-%d", i))
	m := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprintf("warm-%d", i), UID: uid,
		Labels: map[string]string{common.PoolLabel: "warm"}, CreationTimestamp: metav1.NewTime(time.Unix(int64(1000+i), 0))}}
	m.Spec.ResourceRef = &common.ObjectReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3Bucket", Namespace: "admin", Name: "bucket-" + string(uid)}
	if ready {
		m.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: "Available", LastTransitionTime: metav1.Now()}}
	}
	mg := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "bucket-" + string(uid)}}
	mg.Spec.ClaimRef = &common.ObjectReference{APIVersion: storagev1.GroupVersion.String(), Kind: "Bucket", Namespace: "team", Name: m.Name, UID: uid}
	return m, mg
}

func poolReconciler(t *testing.T, objs ...client.Object) (*Reconciler, client.Client, *events.FakeRecorder) {
	t.Helper()
	reg := kinds.NewRegistry(nil)
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(objs...).
		WithStatusSubresource(&storagev1.Bucket{}, &awsstoragev1.S3Bucket{}, &scalingv1.ResourcePool{}).Build()
	rec := events.NewFakeRecorder(20)
	return &Reconciler{client: c, reader: c, reg: reg, recorder: resource.RecorderFor(rec), opts: Options{UserErrorRetry: 30e9, Resync: time.Minute}}, c, rec
}

func reconcilePool(t *testing.T, r *Reconciler, c client.Client) *scalingv1.ResourcePool {
	t.Helper()
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "warm"}}); err != nil {
		t.Fatal(err)
	}
	pool := &scalingv1.ResourcePool{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "warm"}, pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

func members(t *testing.T, c client.Client) []storagev1.Bucket {
	t.Helper()
	list := &storagev1.BucketList{}
	if err := c.List(context.Background(), list, client.InNamespace("team"), client.MatchingLabels{common.PoolLabel: "warm"}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestPoolFills: an empty pool makes size members from its template, owned by it,
// labelled, each writing a connection Secret of its own name; it reports them provisioning.
func TestPoolFills(t *testing.T) {
	r, c, rec := poolReconciler(t, bucketPool(3))
	pool := reconcilePool(t, r, c)
	ms := members(t, c)
	if len(ms) != 3 {
		t.Fatalf("%d members, want 3", len(ms))
	}
	for _, m := range ms {
		if m.Labels["team"] != "a" || !m.Spec.Versioning || m.Spec.ClassRef == nil || m.Spec.ClassRef.Name != "fast" ||
			m.Spec.WriteConnectionSecretToRef == nil || m.Spec.WriteConnectionSecretToRef.Name != m.Name ||
			len(m.OwnerReferences) != 1 || m.OwnerReferences[0].UID != "pool-uid" {
			t.Errorf("member %s: labels %v, spec %+v, owners %+v", m.Name, m.Labels, m.Spec, m.OwnerReferences)
		}
	}
	if pool.Status.Provisioning != 3 || pool.Status.Ready != 0 {
		t.Errorf("status %+v", pool.Status)
	}
	if ready := meta.FindStatusCondition(pool.Status.Conditions, common.TypeReady); ready == nil || ready.Reason != ReasonProvisioning {
		t.Errorf("Ready %+v", ready)
	}
	if len(rec.Events) != 1 {
		t.Errorf("%d events, want one ScaledUp", len(rec.Events))
	}
	if reconcilePool(t, r, c); len(members(t, c)) != 3 {
		t.Errorf("a second reconcile made more members: %d", len(members(t, c)))
	}
}

// TestPoolHandOuts: a member whose claim records it is deleted and replaced; a member
// whose claim is gone comes back, its resource bound to it again; maxSize counts the
// claims filled from the pool.
func TestPoolHandOuts(t *testing.T) {
	done, doneMg := member(0, true)
	done.Annotations = map[string]string{common.PoolMemberTakenByAnnotation: "a/claim-a"}
	doneMg.Spec.ClaimRef.Name, doneMg.Spec.ClaimRef.UID = "a", "claim-a"
	a := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "a", UID: "claim-a",
		Annotations: map[string]string{common.PoolMemberAnnotation: resourcepool.Fill{Pool: "warm", Member: done.Name, UID: done.UID}.String()}}}
	orphan, orphanMg := member(1, true)
	orphan.Annotations = map[string]string{common.PoolMemberTakenByAnnotation: "gone/claim-gone"}
	orphanMg.Spec.ClaimRef.Name, orphanMg.Spec.ClaimRef.UID = "gone", "claim-gone"
	ready, readyMg := member(2, true)
	pool := bucketPool(3)
	pool.Spec.MaxSize = ptr.To[int32](4)
	r, c, _ := poolReconciler(t, pool, done, doneMg, a, orphan, orphanMg, ready, readyMg)
	got := reconcilePool(t, r, c)

	if err := c.Get(context.Background(), client.ObjectKeyFromObject(done), &storagev1.Bucket{}); err == nil {
		t.Error("the member claim a took is still there")
	}
	back := &storagev1.Bucket{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(orphan), back); err != nil || back.Annotations[common.PoolMemberTakenByAnnotation] != "" {
		t.Errorf("the orphaned member was not given back: %v %v", back.Annotations, err)
	}
	mg := &awsstoragev1.S3Bucket{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(orphanMg), mg); err != nil || mg.Spec.ClaimRef.UID != orphan.UID || mg.Spec.ClaimRef.Name != orphan.Name {
		t.Errorf("the orphaned member's resource is bound to %+v", mg.Spec.ClaimRef)
	}
	// Counted before the give-back lands: ready 1 (warm-2), handed out 2 (claim a, the
	// orphan's taker); maxSize 4 leaves room for one more member.
	if got.Status.Ready != 1 || got.Status.HandedOut != 2 || got.Status.Provisioning != 1 {
		t.Errorf("status %+v", got.Status)
	}
	got = reconcilePool(t, r, c)
	if got.Status.Ready != 2 || got.Status.HandedOut != 1 || got.Status.Provisioning != 1 || len(members(t, c)) != 3 {
		t.Errorf("after the give-back: status %+v, %d members", got.Status, len(members(t, c)))
	}
}

// TestPoolScalesDown: a lowered size removes spare members, provisioning ones first.
func TestPoolScalesDown(t *testing.T) {
	m0, mg0 := member(0, true)
	m1, mg1 := member(1, false)
	m2, mg2 := member(2, true)
	r, c, _ := poolReconciler(t, bucketPool(1), m0, mg0, m1, mg1, m2, mg2)
	reconcilePool(t, r, c)
	var left []string
	for _, m := range members(t, c) {
		left = append(left, m.Name)
	}
	if len(left) != 1 || left[0] != "warm-0" {
		t.Errorf("members left %v, want the oldest ready one", left)
	}
}

// TestPoolRefusesBadTemplates: a kind that is not a claim kind, and a template that sets
// poolRef, leave the pool Synced False with the reason and one event, and make nothing.
func TestPoolRefusesBadTemplates(t *testing.T) {
	notClaim := bucketPool(2)
	notClaim.Spec.ClaimTemplate.APIVersion, notClaim.Spec.ClaimTemplate.Kind = awsstoragev1.GroupVersion.String(), "S3Bucket"
	withPool := bucketPool(2)
	withPool.Spec.ClaimTemplate.Spec.Raw = []byte(`{"poolRef":{"name":"other"}}`)
	for name, tc := range map[string]struct {
		pool   *scalingv1.ResourcePool
		reason string
	}{
		"a managed kind":       {notClaim, ReasonNotAClaimKind},
		"a template with pool": {withPool, ReasonInvalidTemplate},
	} {
		t.Run(name, func(t *testing.T) {
			r, c, rec := poolReconciler(t, tc.pool)
			pool := reconcilePool(t, r, c)
			reconcilePool(t, r, c)
			synced := meta.FindStatusCondition(pool.Status.Conditions, common.TypeSynced)
			if synced == nil || synced.Status != metav1.ConditionFalse || synced.Reason != tc.reason {
				t.Errorf("Synced %+v, want False %s", synced, tc.reason)
			}
			if ready := meta.FindStatusCondition(pool.Status.Conditions, common.TypeReady); ready == nil || ready.Reason != tc.reason {
				t.Errorf("Ready %+v", ready)
			}
			if len(rec.Events) != 1 || len(members(t, c)) != 0 {
				t.Errorf("%d events (want 1), %d members", len(rec.Events), len(members(t, c)))
			}
		})
	}
}

// TestReadiness: the pool's Ready condition from its counts and the last decision.
func TestReadiness(t *testing.T) {
	spec := scalingv1.ResourcePoolSpec{Size: 3, MaxSize: ptr.To[int32](5)}
	for _, tc := range []struct {
		counts resourcepool.Counts
		held   string
		status metav1.ConditionStatus
		reason string
	}{
		{resourcepool.Counts{Ready: 3}, "", metav1.ConditionTrue, ReasonFull},
		{resourcepool.Counts{Ready: 3, HandedOut: 9}, resourcepool.ReasonAtMaxSize, metav1.ConditionTrue, ReasonFull},
		{resourcepool.Counts{Ready: 1, Provisioning: 2}, "", metav1.ConditionFalse, ReasonProvisioning},
		{resourcepool.Counts{Ready: 1, HandedOut: 4}, resourcepool.ReasonAtMaxSize, metav1.ConditionFalse, resourcepool.ReasonAtMaxSize},
		{resourcepool.Counts{Ready: 1, Failed: 2}, "", metav1.ConditionFalse, ReasonMembersFailed},
		{resourcepool.Counts{Ready: 1, Failed: 1, Provisioning: 1}, "", metav1.ConditionFalse, ReasonProvisioning},
	} {
		status, reason, _ := readiness(spec, tc.counts, resourcepool.Decision{Held: tc.held})
		if status != tc.status || reason != tc.reason {
			t.Errorf("readiness(%+v, held %q) = %s %s, want %s %s", tc.counts, tc.held, status, reason, tc.status, tc.reason)
		}
	}
}
