package claim

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// TestWantRevision: which revision a resource of a class should run.
func TestWantRevision(t *testing.T) {
	class := func(latest string, policy common.RevisionPolicy) *awsstoragev1.S3BucketClass {
		c := &awsstoragev1.S3BucketClass{}
		c.Status.LatestRevision, c.SpecTemplate.RevisionPolicy = latest, policy
		return c
	}
	mg := func(rev string, policy common.RevisionPolicy) resource.Managed {
		m := &awsstoragev1.S3Bucket{}
		m.Spec.Revision, m.Spec.RevisionPolicy = rev, policy
		return m
	}
	rolling := func(target string, admitted ...string) *awsstoragev1.S3BucketClass {
		c := class("r3", "")
		c.Status.Rollout = &common.RolloutStatus{Revision: target, Admitted: admitted}
		return c
	}
	manualRolling := rolling("r3", "b")
	manualRolling.SpecTemplate.RevisionPolicy = common.RevisionManual
	done := rolling("r3")
	done.Status.Rollout.CompletedAt = &metav1.Time{}
	named := func(name, rev string) resource.Managed {
		m := mg(rev, "").(*awsstoragev1.S3Bucket)
		m.Name = name
		return m
	}
	for _, tc := range []struct {
		name  string
		mg    resource.Managed
		class *awsstoragev1.S3BucketClass
		want  string
	}{
		{"a new resource runs the latest", nil, class("r2", common.RevisionManual), "r2"},
		{"one on an older revision waits for a rollout (Automatic by default)", mg("r1", ""), class("r2", ""), "r1"},
		{"one that stays, stays (the class says Manual)", mg("r1", ""), class("r2", common.RevisionManual), "r1"},
		{"one that stays, stays (it says Manual)", mg("r1", common.RevisionManual), class("r2", common.RevisionAutomatic), "r1"},
		{"its own Automatic wins over the class's Manual", func() resource.Managed {
			m := named("b", "r1").(*awsstoragev1.S3Bucket)
			m.Spec.RevisionPolicy = common.RevisionAutomatic
			return m
		}(), manualRolling, "r3"},
		{"as the class's Manual wins over none", named("b", "r1"), manualRolling, "r1"},
		{"one that names none gets the latest, Manual or not", mg("", common.RevisionManual), class("r2", ""), "r2"},
		{"a class without revisions keeps what it has", mg("r1", ""), class("", ""), "r1"},
		{"and gives none", mg("", ""), class("", ""), ""},
		{"a rollout lets the admitted on", named("a", "r1"), rolling("r3", "a"), "r3"},
		{"and holds the others back", named("b", "r1"), rolling("r3", "a"), "r1"},
		{"a new resource gets the revision rolling out", nil, rolling("r3"), "r3"},
		{"so does one that names none", named("b", ""), rolling("r3"), "r3"},
		{"a completed rollout lets every one on", named("b", "r1"), done, "r3"},
		{"an undo rolls the admitted back", named("a", "r3"), rolling("r2", "a"), "r2"},
		{"the others stay until admitted", named("b", "r3"), rolling("r2", "a"), "r3"},
	} {
		if got := wantRevision(tc.mg, tc.class); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRevisionsGovernTheSpec: a resource is made from the class's latest revision, not the
// class as edited since; it follows a new revision, stays on its own with revisionPolicy
// Manual, and a revision of another class is refused.
func TestRevisionsGovernTheSpec(t *testing.T) {
	ctx := context.Background()
	gvk := awsstoragev1.GroupVersion.WithKind("S3BucketClass")
	mod, err := module.FromFiles(map[string][]byte{"main.tf": []byte(`variable "bucket_name" {}`)})
	if err != nil {
		t.Fatal(err)
	}
	at := func(encryption string, n int64) *terraformv1.ClassRevision {
		c := s3Class("admin", "team")
		c.SpecTemplate.ForProvider.Encryption = encryption
		rev, err := revision.Build(c, gvk, mod, nil, n)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	r1, r2 := at("AES256", 1), at("aws:kms:v2", 2)
	class := s3Class("admin", "team")
	class.Status.LatestRevision = r1.Name // edited since: the class says aws:kms, r1 AES256
	r, c := bucketReconciler(t, portableClass("fast", "admin", nil), class, bucketClaim("fast"), r1, r2)
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "b"}}
	reconcile := func() *awsstoragev1.S3Bucket {
		t.Helper()
		for range 2 {
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
		mg := &awsstoragev1.S3Bucket{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "admin", Name: "bucket-uid-1"}, mg); err != nil {
			t.Fatal(err)
		}
		return mg
	}
	setLatest := func(name string) {
		t.Helper()
		cl := &awsstoragev1.S3BucketClass{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(class), cl); err != nil {
			t.Fatal(err)
		}
		cl.Status.LatestRevision = name
		now := metav1.Now()
		cl.Status.Rollout = &common.RolloutStatus{Revision: name, CompletedAt: &now}
		if err := c.Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	if mg := reconcile(); mg.Spec.Revision != r1.Name || mg.Spec.ForProvider.Encryption != "AES256" || !mg.Spec.ForProvider.Versioning {
		t.Fatalf("made at revision %q with %+v; want %s's template and the claim's fields", mg.Spec.Revision, mg.Spec.ForProvider, r1.Name)
	}
	setLatest(r2.Name)
	if mg := reconcile(); mg.Spec.Revision != r2.Name || mg.Spec.ForProvider.Encryption != "aws:kms:v2" {
		t.Fatalf("after a new revision: %q with %+v; want %s", mg.Spec.Revision, mg.Spec.ForProvider, r2.Name)
	}

	mg := reconcile()
	mg.Spec.RevisionPolicy, mg.Spec.Revision = common.RevisionManual, r1.Name
	if err := c.Update(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if mg := reconcile(); mg.Spec.Revision != r1.Name || mg.Spec.ForProvider.Encryption != "AES256" || mg.Spec.RevisionPolicy != common.RevisionManual {
		t.Fatalf("a Manual resource moved back: %q (%s) with %+v; want %s", mg.Spec.Revision, mg.Spec.RevisionPolicy, mg.Spec.ForProvider, r1.Name)
	}
	setLatest(r2.Name)
	if mg := reconcile(); mg.Spec.Revision != r1.Name {
		t.Fatalf("a Manual resource followed the class to %q", mg.Spec.Revision)
	}

	mg = reconcile()
	mg.Spec.Revision = "other-class-rev"
	if err := c.Update(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	claim := bucketClaim("fast")
	if err := c.Get(ctx, req.NamespacedName, claim); err != nil {
		t.Fatal(err)
	}
	if s := meta.FindStatusCondition(claim.Status.Conditions, common.TypeSynced); s == nil || s.Reason != revision.ReasonRevisionNotFound {
		t.Errorf("claim Synced = %+v, want %s", s, revision.ReasonRevisionNotFound)
	}
}
