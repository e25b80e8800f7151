package classrevision

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// TestReport: the revisions newest first, each with the resources that run it, the ready
// ones among them, and those told to move to it.
func TestReport(t *testing.T) {
	rev := func(name string, n int64) terraformv1.ClassRevision {
		return terraformv1.ClassRevision{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: terraformv1.ClassRevisionSpec{Revision: n}}
	}
	revs := []terraformv1.ClassRevision{rev("c-1", 1), rev("c-2", 2)}
	fleet := []member{{want: "c-2", runs: "c-2", ready: true}, {want: "c-2", runs: "c-1", ready: true}, {want: "c-1", runs: "c-1"}, {want: "c-2", runs: ""}}
	got := report(revs, &revs[1], fleet, "c-1")
	want := common.ClassRevisions{LatestRevision: "c-2", Revisions: []common.RevisionCount{
		{Name: "c-2", Revision: 2, Resources: 1, Ready: 1, Pending: 2},
		{Name: "c-1", Revision: 1, Resources: 2, Ready: 1},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := report(revs, nil, nil, "c-1"); got.LatestRevision != "c-1" {
		t.Errorf("with no revision made now, latest %q; want the one reported before", got.LatestRevision)
	}
}

// TestReconcile: a class gets revision 1; nothing new while nothing changes; an edit makes
// revision 2, the latest; resources are counted on theirs; old revisions no resource
// names go beyond Keep, and the latest and those resources name stay.
func TestReconcile(t *testing.T) {
	ctx := context.Background()
	reg := kinds.NewRegistry(nil)
	kind, _ := reg.ManagedForClass(awsstoragev1.GroupVersion.WithKind("S3BucketClass"))
	class := &awsstoragev1.S3BucketClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "s3", UID: "c-uid"}}
	class.SpecTemplate.ForProvider.Encryption = "v0"
	bucket := func(name, want, runs string) *awsstoragev1.S3Bucket {
		b := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: name}}
		b.Spec.ClassRef = &common.ClassReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3BucketClass", Name: "s3", Namespace: "admin"}
		b.Spec.Revision, b.Status.Revision = want, runs
		return b
	}
	other := bucket("other-class", "x", "x")
	other.Spec.ClassRef.Name = "s4"
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(class, other).WithStatusSubresource(class).Build()
	bundled, err := module.FromFiles(map[string][]byte{"main.tf": []byte(`variable "bucket_name" {}`)})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{client: c, kind: kind, bundled: bundled, events: resource.RecorderFor(events.NewFakeRecorder(100))}
	reconcile := func() *awsstoragev1.S3BucketClass {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(class)}); err != nil {
			t.Fatal(err)
		}
		got := &awsstoragev1.S3BucketClass{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(class), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	edit := func(encryption string) {
		t.Helper()
		got := &awsstoragev1.S3BucketClass{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(class), got); err != nil {
			t.Fatal(err)
		}
		got.SpecTemplate.ForProvider.Encryption = encryption
		if err := c.Update(ctx, got); err != nil {
			t.Fatal(err)
		}
	}
	first := reconcile().Status.LatestRevision
	if again := reconcile(); again.Status.LatestRevision != first || len(again.Status.Revisions) != 1 || again.Status.Revisions[0].Revision != 1 {
		t.Fatalf("an unchanged class: %+v; want revision 1 only", again.Status)
	}
	for _, b := range []*awsstoragev1.S3Bucket{bucket("on-1", first, first), bucket("to-1", first, "")} {
		if err := c.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	edit("v1")
	st := reconcile().Status
	want := []common.RevisionCount{{Revision: 2}, {Revision: 1, Resources: 1, Pending: 1}}
	if diff := cmp.Diff(want, st.Revisions, cmpopts.IgnoreFields(common.RevisionCount{}, "Name", "CreatedAt")); diff != "" || st.LatestRevision == first {
		t.Fatalf("after an edit, latest %s (first %s); revisions (-want +got):\n%s", st.LatestRevision, first, diff)
	}
	for i := 2; i <= Keep+3; i++ {
		edit(fmt.Sprintf("v%d", i))
		reconcile()
	}
	list := &terraformv1.ClassRevisionList{}
	if err := c.List(ctx, list, client.MatchingLabels{revision.ClassLabel: "c-uid"}); err != nil {
		t.Fatal(err)
	}
	var numbers []int64
	for _, rev := range list.Items {
		numbers = append(numbers, rev.Spec.Revision)
	}
	wantNumbers := []int64{1}
	for n := int64(Keep + 4 - Keep + 1); n <= Keep+4; n++ {
		wantNumbers = append(wantNumbers, n)
	}
	if diff := cmp.Diff(wantNumbers, numbers, cmpopts.SortSlices(func(a, b int64) bool { return a < b })); diff != "" {
		t.Errorf("revisions kept (-want +got):\n%s", diff)
	}
}

// TestCountsWaitForTheirTime: a report whose only news is a count is written once
// tallyEvery has passed since the class's last write, and the reconcile says when; a
// report with news (a new revision) is written at once.
func TestCountsWaitForTheirTime(t *testing.T) {
	ctx := context.Background()
	reg := kinds.NewRegistry(nil)
	kind, _ := reg.ManagedForClass(awsstoragev1.GroupVersion.WithKind("S3BucketClass"))
	class := &awsstoragev1.S3BucketClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "s3", UID: "c-uid"}}
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(class).WithStatusSubresource(class).Build()
	bundled, err := module.FromFiles(map[string][]byte{"main.tf": []byte(`variable "bucket_name" {}`)})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	r := &Reconciler{client: c, kind: kind, bundled: bundled, events: resource.RecorderFor(events.NewFakeRecorder(100)),
		pace: reportPace{now: func() time.Time { return now }}}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(class)}
	reconcile := func() (ctrl.Result, common.ClassRevisions) {
		t.Helper()
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got := &awsstoragev1.S3BucketClass{}
		if err := c.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		return res, got.Status.ClassRevisions
	}
	_, st := reconcile()
	if len(st.Revisions) != 1 {
		t.Fatalf("first look: %+v; want revision 1 written at once", st)
	}
	b := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "b"}}
	b.Spec.ClassRef = &common.ClassReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3BucketClass", Name: "s3", Namespace: "admin"}
	b.Spec.Revision, b.Status.Revision = st.LatestRevision, st.LatestRevision
	if err := c.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Second)
	res, st := reconcile()
	if st.Revisions[0].Resources != 0 || res.RequeueAfter != tallyEvery-2*time.Second {
		t.Fatalf("a new resource 2 s after the last write: %d resources written, requeued after %v; want none yet, after %v",
			st.Revisions[0].Resources, res.RequeueAfter, tallyEvery-2*time.Second)
	}
	now = now.Add(tallyEvery)
	if _, st = reconcile(); st.Revisions[0].Resources != 1 {
		t.Fatalf("after tallyEvery: %d resources written; want 1", st.Revisions[0].Resources)
	}
}
