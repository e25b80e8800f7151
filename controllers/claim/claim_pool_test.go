package claim

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/resourcepool"
)

// poolFixture is a pool "warm" of Buckets of class "fast" and its ready members
// warm-0..n-1, each bound to an S3Bucket made for it (named for the member, as the
// claim reconciler names them).
func poolFixture(n int) []client.Object {
	pool := &scalingv1.ResourcePool{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "warm"},
		Spec: scalingv1.ResourcePoolSpec{Size: int32(n), ClaimTemplate: scalingv1.ClaimTemplate{
			APIVersion: storagev1.GroupVersion.String(), Kind: "Bucket", Spec: &apiextensionsv1.JSON{Raw: []byte(`{"classRef":{"name":"fast"}}`)}}}}
	objs := []client.Object{pool, portableClass("fast", "admin", nil), s3Class("admin", "team")}
	for i := range n {
		uid := types.UID(fmt.Sprintf("member-uid-%d", i))
		m := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprintf("warm-%d", i), UID: uid,
			Labels: map[string]string{common.PoolLabel: "warm"}, Finalizers: []string{resource.Finalizer},
			CreationTimestamp: metav1.NewTime(time.Unix(int64(1000+i), 0))}}
		m.Spec.ClassRef = &common.LocalReference{Name: "fast"}
		m.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: m.Name}
		m.Spec.ResourceRef = &common.ObjectReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3Bucket", Namespace: "admin", Name: "bucket-" + string(uid)}
		m.Status.BindingPhase = common.BindingPhaseBound
		m.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: common.ReasonAvailable, LastTransitionTime: metav1.Now()}}
		mg := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "bucket-" + string(uid)}}
		mg.Spec.ClaimRef = &common.ObjectReference{APIVersion: storagev1.GroupVersion.String(), Kind: "Bucket", Namespace: "team", Name: m.Name, UID: uid}
		mg.Spec.ClassRef = &common.ClassReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3BucketClass", Namespace: "admin", Name: "s3"}
		mg.Spec.ForProvider.BucketName = kinds.BucketName("team", m.Name, string(uid))
		mg.Status.BindingPhase = common.BindingPhaseBound
		mg.Status.Conditions = m.Status.Conditions
		objs = append(objs, m, mg)
	}
	return objs
}

// poolClaim is a Bucket named name that takes from pool "warm".
func poolClaim(name string) *storagev1.Bucket {
	b := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID("claim-" + name)}}
	b.Spec.PoolRef = &common.PoolReference{Name: "warm"}
	b.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: name + "-conn"}
	return b
}

// poolReconciler is the Bucket reconciler over a fake client that also knows pools.
func poolReconciler(t *testing.T, objs ...client.Object) (*Reconciler, client.Client) {
	t.Helper()
	reg := kinds.NewRegistry(nil)
	kind, _ := reg.Claim(kinds.BucketGVK)
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(withFirstRevisions(t, objs)...).
		WithStatusSubresource(&storagev1.Bucket{}, &awsstoragev1.S3Bucket{}, &scalingv1.ResourcePool{}).Build()
	return &Reconciler{client: c, reader: c, reg: reg, kind: kind, opts: Options{UserErrorRetry: 30e9},
		recorder: resource.RecorderFor(events.NewFakeRecorder(20))}, c
}

func reconcileClaim(t *testing.T, r *Reconciler, name string) {
	t.Helper()
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: name}}); err != nil {
		t.Fatalf("reconcile %s: %v", name, err)
	}
}

func getBucket(t *testing.T, c client.Client, name string) *storagev1.Bucket {
	t.Helper()
	b := &storagev1.Bucket{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: name}, b); err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return b
}

// checkFilled: the claim records one member's resource, whose claimRef is the claim, and
// the member is deleted (or going). It returns the resource's name.
func checkFilled(t *testing.T, c client.Client, name string) string {
	t.Helper()
	claim := getBucket(t, c, name)
	f, ok := resourcepool.ParseFill(claim.Annotations)
	if !ok || claim.Spec.ResourceRef == nil || claim.Spec.ClassRef == nil || claim.Spec.ClassRef.Name != "fast" {
		t.Fatalf("claim %s: annotations %v, spec %+v; want filled from a member", name, claim.Annotations, claim.Spec.ClaimSpec)
	}
	mg := &awsstoragev1.S3Bucket{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "admin", Name: claim.Spec.ResourceRef.Name}, mg); err != nil {
		t.Fatal(err)
	}
	if ref := mg.Spec.ClaimRef; ref == nil || ref.UID != claim.UID || ref.Name != name {
		t.Errorf("claim %s: resource's claimRef %+v", name, ref)
	}
	if mg.Name != "bucket-"+string(f.UID) {
		t.Errorf("claim %s: resource %s is not member %s's", name, mg.Name, f.Member)
	}
	m := &storagev1.Bucket{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: f.Member}, m); err == nil && m.DeletionTimestamp.IsZero() {
		t.Errorf("claim %s: member %s is still there and not deleted", name, f.Member)
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return mg.Name
}

// TestPoolFillWarm: claims that name a pool each take a different ready member, keep its
// resource's names (syncSpec configures it as the member), and become Ready at once.
func TestPoolFillWarm(t *testing.T) {
	objs := append(poolFixture(3), poolClaim("a"), poolClaim("b"), poolClaim("c"))
	r, c := poolReconciler(t, objs...)
	seen := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		reconcileClaim(t, r, name) // takes a member
		reconcileClaim(t, r, name) // binds it and writes the status
		mg := checkFilled(t, c, name)
		if other, dup := seen[mg]; dup {
			t.Fatalf("claims %s and %s got the same resource %s", other, name, mg)
		}
		seen[mg] = name
		s3 := &awsstoragev1.S3Bucket{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "admin", Name: mg}, s3); err != nil {
			t.Fatal(err)
		}
		f, _ := resourcepool.ParseFill(getBucket(t, c, name).Annotations)
		if want := kinds.BucketName("team", f.Member, string(f.UID)); s3.Spec.ForProvider.BucketName != want {
			t.Errorf("claim %s: bucket name %q, want the member's %q", name, s3.Spec.ForProvider.BucketName, want)
		}
		claim := getBucket(t, c, name)
		if !resource.IsReady(claim.Status.Conditions) || claim.Status.BindingPhase != common.BindingPhaseBound {
			t.Errorf("claim %s: status %+v; want Bound and Ready", name, claim.Status)
		}
	}
}

// TestPoolHandOutCrashPoints: a hand-over cut short after any step (the take, the
// resource's rebinding, the claim's resourceRef) is finished by the claim's next
// reconcile with the same member, and no other member is taken.
func TestPoolHandOutCrashPoints(t *testing.T) {
	ctx := context.Background()
	taker := resourcepool.Taker{Name: "a", UID: "claim-a"}.String()
	for name, cut := range map[string]func(t *testing.T, c client.Client){
		"after the take": func(t *testing.T, c client.Client) {
			m := getBucket(t, c, "warm-1")
			m.Annotations = map[string]string{common.PoolMemberTakenByAnnotation: taker}
			if err := c.Update(ctx, m); err != nil {
				t.Fatal(err)
			}
		},
		"after the rebinding": func(t *testing.T, c client.Client) {
			m := getBucket(t, c, "warm-1")
			m.Annotations = map[string]string{common.PoolMemberTakenByAnnotation: taker}
			if err := c.Update(ctx, m); err != nil {
				t.Fatal(err)
			}
			mg := &awsstoragev1.S3Bucket{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "admin", Name: "bucket-member-uid-1"}, mg); err != nil {
				t.Fatal(err)
			}
			mg.Spec.ClaimRef = &common.ObjectReference{APIVersion: storagev1.GroupVersion.String(), Kind: "Bucket", Namespace: "team", Name: "a", UID: "claim-a"}
			if err := c.Update(ctx, mg); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, c := poolReconciler(t, append(poolFixture(3), poolClaim("a"))...)
			cut(t, c)
			reconcileClaim(t, r, "a")
			reconcileClaim(t, r, "a")
			if mg := checkFilled(t, c, "a"); mg != "bucket-member-uid-1" {
				t.Errorf("claim a finished with %s, not the member it had taken", mg)
			}
			for _, other := range []string{"warm-0", "warm-2"} {
				if m := getBucket(t, c, other); m.Annotations[common.PoolMemberTakenByAnnotation] != "" || !m.DeletionTimestamp.IsZero() {
					t.Errorf("%s was touched: %v", other, m.Annotations)
				}
			}
		})
	}
}

// TestPoolNeverGivesTwice: a member taken by another claim is never taken again, and a
// take written against a stale copy of a member (one another claim took meanwhile)
// fails rather than taking it a second time.
func TestPoolNeverGivesTwice(t *testing.T) {
	ctx := context.Background()
	r, c := poolReconciler(t, append(poolFixture(1), poolClaim("a"), poolClaim("b"))...)
	stale, err := r.poolMembers(ctx, &scalingv1.ResourcePool{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "warm"}})
	if err != nil || len(stale) != 1 {
		t.Fatalf("members %v, %v", stale, err)
	}
	reconcileClaim(t, r, "a")
	checkFilled(t, c, "a")
	if took, err := r.take(ctx, getBucket(t, c, "b"), stale[0]); err != nil || took {
		t.Errorf("take from a stale copy = %v, %v; want not taken", took, err)
	}
	reconcileClaim(t, r, "b") // finds no member ready: provisioned cold
	b := getBucket(t, c, "b")
	if _, ok := resourcepool.ParseFill(b.Annotations); ok || b.Spec.ResourceRef == nil || b.Spec.ResourceRef.Name != "bucket-claim-b" {
		t.Errorf("claim b: %v, resourceRef %+v; want provisioned for itself", b.Annotations, b.Spec.ResourceRef)
	}
}

// TestPoolColdFallback: with no member ready, the claim is provisioned from the pool's
// class and says so in a waiting reason until its resource is created.
func TestPoolColdFallback(t *testing.T) {
	objs := poolFixture(1)
	m := objs[3].(*storagev1.Bucket)
	m.Status.Conditions = nil // provisioning, not ready
	r, c := poolReconciler(t, append(objs, poolClaim("a"))...)
	reconcileClaim(t, r, "a")
	claim := getBucket(t, c, "a")
	if claim.Spec.ClassRef == nil || claim.Spec.ClassRef.Name != "fast" || claim.Spec.ResourceRef == nil || claim.Spec.ResourceRef.Name != "bucket-claim-a" {
		t.Fatalf("claim spec %+v; want the pool's class and a resource of its own", claim.Spec.ClaimSpec)
	}
	mg := &awsstoragev1.S3Bucket{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "admin", Name: "bucket-claim-a"}, mg); err != nil {
		t.Fatal(err)
	}
	mg.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionFalse, Reason: common.ReasonCreating, LastTransitionTime: metav1.Now()}}
	if err := c.Status().Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	reconcileClaim(t, r, "a")
	claim = getBucket(t, c, "a")
	if s := meta.FindStatusCondition(claim.Status.Conditions, common.TypeSynced); s == nil || s.Reason != ReasonPoolEmpty {
		t.Errorf("Synced %+v; want reason %s", s, ReasonPoolEmpty)
	}
	if m := getBucket(t, c, "warm-0"); m.Annotations[common.PoolMemberTakenByAnnotation] != "" {
		t.Errorf("the provisioning member was taken: %v", m.Annotations)
	}
}

// TestPoolRefusals: a pool in another namespace, a missing pool and a pool of another
// kind are user errors on the claim, which takes nothing.
func TestPoolRefusals(t *testing.T) {
	otherNS := poolClaim("a")
	otherNS.Spec.PoolRef.Namespace = "elsewhere"
	missing := poolClaim("a")
	missing.Spec.PoolRef.Name = "gone"
	wrongKind := poolFixture(1)
	wrongKind[0].(*scalingv1.ResourcePool).Spec.ClaimTemplate.Kind = "PostgreSQLInstance"
	wrongKind[0].(*scalingv1.ResourcePool).Spec.ClaimTemplate.APIVersion = "database.terraplane.io/v1alpha1"
	for name, tc := range map[string]struct {
		objs   []client.Object
		reason string
	}{
		"another namespace": {append(poolFixture(1), otherNS), common.ReasonReferenceNotAllowed},
		"a missing pool":    {append(poolFixture(1), missing), ReasonPoolNotFound},
		"another kind":      {append(wrongKind, poolClaim("a")), ReasonPoolKindMismatch},
	} {
		t.Run(name, func(t *testing.T) {
			r, c := poolReconciler(t, tc.objs...)
			reconcileClaim(t, r, "a")
			claim := getBucket(t, c, "a")
			if s := meta.FindStatusCondition(claim.Status.Conditions, common.TypeSynced); s == nil || s.Status != metav1.ConditionFalse || s.Reason != tc.reason {
				t.Errorf("Synced %+v; want False, %s", s, tc.reason)
			}
			if claim.Spec.ResourceRef != nil || getBucket(t, c, "warm-0").Annotations[common.PoolMemberTakenByAnnotation] != "" {
				t.Errorf("the claim was filled: %+v", claim.Spec.ResourceRef)
			}
		})
	}
}
