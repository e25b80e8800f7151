package claim

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// boundPair is a claim of class fast bound to the S3Bucket it provisioned.
func boundPair(policy common.ReclaimPolicy) (*storagev1.Bucket, *awsstoragev1.S3Bucket) {
	claim := bucketClaim("fast")
	claim.Finalizers = []string{resource.Finalizer}
	claim.Spec.ResourceRef = &common.ObjectReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3Bucket", Namespace: "admin", Name: "bucket-uid-1"}
	mg := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "bucket-uid-1", Finalizers: []string{resource.Finalizer}}}
	mg.Spec.ReclaimPolicy = policy
	mg.Spec.ClaimRef = &common.ObjectReference{APIVersion: "storage.terraplane.io/v1alpha1", Kind: "Bucket", Namespace: "team", Name: "b", UID: "uid-1"}
	mg.Spec.ClassRef = &common.ClassReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3BucketClass", Namespace: "admin", Name: "s3"}
	mg.Status.BindingPhase = common.BindingPhaseBound
	mg.SetGroupVersionKind(awsstoragev1.S3BucketGroupVersionKind)
	return claim, mg
}

// TestRelease: deleting a claim retains (Released) or deletes its resource as the
// reclaim policy says, and waits for a deleted one to be gone; a resource never bound to
// this claim is left alone.
func TestRelease(t *testing.T) {
	cases := map[string]struct {
		policy      common.ReclaimPolicy
		otherUID    bool
		wantWaiting bool
		wantPhase   common.BindingPhase
		wantDeleted bool
	}{
		"retain":          {common.ReclaimRetain, false, false, common.BindingPhaseReleased, false},
		"delete":          {common.ReclaimDelete, false, true, "", true},
		"another claim's": {common.ReclaimDelete, true, false, common.BindingPhaseBound, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			claim, mg := boundPair(tc.policy)
			if tc.otherUID {
				mg.Spec.ClaimRef.UID = "someone-else"
			}
			r, c := bucketReconciler(t, claim, mg)
			err := r.release(ctx, claim)
			w, waiting := resource.AsWaiting(err)
			if waiting != tc.wantWaiting || (!waiting && err != nil) {
				t.Fatalf("release = %v, want waiting %v", err, tc.wantWaiting)
			}
			if want := "waiting for S3Bucket admin/"; waiting && !strings.HasPrefix(w.Message, want) {
				t.Errorf("release says %q; want it to name the resource: %q...", w.Message, want)
			}
			got := &awsstoragev1.S3Bucket{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(mg), got); err != nil {
				t.Fatal(err)
			}
			if deleted := !got.DeletionTimestamp.IsZero(); deleted != tc.wantDeleted {
				t.Errorf("deletion asked: %v, want %v", deleted, tc.wantDeleted)
			}
			if !tc.wantDeleted && got.Status.BindingPhase != tc.wantPhase {
				t.Errorf("phase %q, want %q", got.Status.BindingPhase, tc.wantPhase)
			}
		})
	}
	claim := bucketClaim("fast")
	claim.Spec.ResourceRef = &common.ObjectReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3Bucket", Namespace: "admin", Name: "gone"}
	r, _ := bucketReconciler(t, claim)
	if err := r.release(context.Background(), claim); err != nil {
		t.Errorf("a resource that is gone: %v", err)
	}
}

// TestSyncSpec: an edit of the claim reaches its dynamically provisioned resource; a
// class that is gone, or now makes another kind, is reported and the resource is left.
func TestSyncSpec(t *testing.T) {
	moduleClass := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "mc"},
		AllowedNamespaces: &common.AllowedNamespaces{Names: []string{"team"}}}
	toModules := &storagev1.BucketClass{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "fast"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "mc", Namespace: "admin"}}
	cases := map[string]struct {
		objs       []client.Object
		wantReason string
		wantTags   map[string]string
	}{
		"the claim's tags reach the resource": {[]client.Object{portableClass("fast", "admin", nil), s3Class("admin", "team")}, "", map[string]string{"team": "blue"}},
		"the class is gone":                   {nil, ReasonClassNotFound, nil},
		"the class makes another kind now":    {[]client.Object{toModules, moduleClass}, ReasonClassChanged, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			claim, mg := boundPair(common.ReclaimRetain)
			claim.Spec.Tags = map[string]string{"team": "blue"}
			r, c := bucketReconciler(t, append(tc.objs, claim, mg)...)
			have := &awsstoragev1.S3Bucket{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(mg), have); err != nil {
				t.Fatal(err)
			}
			have.SetGroupVersionKind(awsstoragev1.S3BucketGroupVersionKind)
			err := r.syncSpec(ctx, claim, have)
			if u, _ := resource.AsUserError(err); tc.wantReason != "" && (u == nil || u.Reason != tc.wantReason) || tc.wantReason == "" && err != nil {
				t.Fatalf("syncSpec = %v, want reason %q", err, tc.wantReason)
			}
			got := &awsstoragev1.S3Bucket{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(mg), got); err != nil {
				t.Fatal(err)
			}
			if len(got.Spec.ForProvider.Tags) != len(tc.wantTags) || got.Spec.ForProvider.Tags["team"] != tc.wantTags["team"] {
				t.Errorf("tags %v, want %v", got.Spec.ForProvider.Tags, tc.wantTags)
			}
		})
	}
}

// TestMirrorSynced: the claim's Synced says what its resource's says when that failed.
func TestMirrorSynced(t *testing.T) {
	ok := resource.Classify(nil, resource.Retries{})
	claim, mg := boundPair(common.ReclaimDelete)
	if got := mirrorSynced(claim, mg, ok); got != ok {
		t.Errorf("a resource without Synced changed the outcome: %+v", got)
	}
	if got := mirrorSynced(claim, nil, ok); got != ok {
		t.Errorf("no resource changed the outcome: %+v", got)
	}
	mg.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: common.ReasonAwaitingApproval, Message: "approve plan 1a2b"}}
	got := mirrorSynced(claim, mg, ok)
	if got.Synced != metav1.ConditionFalse || got.Reason != common.ReasonAwaitingApproval || got.Message != "S3Bucket admin/bucket-uid-1: approve plan 1a2b" || got.EventType != corev1.EventTypeWarning {
		t.Errorf("mirrorSynced = %+v", got)
	}
	// a plan policy's denial reaches the claim, so that a developer learns why
	mg.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: common.ReasonPolicyDenied,
		Message: "plan 1a2b was denied: policy buckets rule not-public: buckets must not be public"}}
	got = mirrorSynced(claim, mg, ok)
	if got.Synced != metav1.ConditionFalse || got.Reason != common.ReasonPolicyDenied ||
		got.Message != "S3Bucket admin/bucket-uid-1: plan 1a2b was denied: policy buckets rule not-public: buckets must not be public" {
		t.Errorf("mirrorSynced of a denial = %+v", got)
	}
}

// TestForManaged: a managed resource maps to the claim its claimRef names, of this kind only.
func TestForManaged(t *testing.T) {
	r, _ := bucketReconciler(t)
	_, mg := boundPair(common.ReclaimDelete)
	if reqs := r.forManaged(context.Background(), mg); len(reqs) != 1 || reqs[0].Namespace != "team" || reqs[0].Name != "b" {
		t.Errorf("forManaged = %v", reqs)
	}
	for name, ref := range map[string]*common.ObjectReference{
		"unbound":       nil,
		"another kind":  {Kind: "PostgreSQLInstance", Namespace: "team", Name: "b"},
		"another group": {APIVersion: "other.io/v1", Kind: "Bucket", Namespace: "team", Name: "b"},
	} {
		mg.Spec.ClaimRef = ref
		if reqs := r.forManaged(context.Background(), mg); len(reqs) != 0 {
			t.Errorf("%s: forManaged = %v", name, reqs)
		}
	}
	if reqs := r.forManaged(context.Background(), &corev1.Secret{}); reqs != nil {
		t.Errorf("not a managed resource: %v", reqs)
	}
}

// TestInvalidCauses: an Invalid error reads as its field causes; anything else as itself.
func TestInvalidCauses(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "S3Bucket"}, "b", field.ErrorList{
		field.Invalid(field.NewPath("spec", "forProvider", "bucketName"), "x", "is immutable"),
		field.Required(field.NewPath("spec", "region"), ""),
	})
	if got, want := invalidCauses(invalid), `Invalid value: "x": is immutable; Required value`; got != want {
		t.Errorf("invalidCauses = %q, want %q", got, want)
	}
	if got := invalidCauses(errors.New("boom")); got != "boom" {
		t.Errorf("invalidCauses(plain) = %q", got)
	}
}
