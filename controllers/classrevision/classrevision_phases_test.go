package classrevision

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// s3Reconciler is a Reconciler of S3BucketClass revisions over a fake client holding objs.
func s3Reconciler(t *testing.T, objs ...client.Object) (*Reconciler, client.Client) {
	t.Helper()
	reg := kinds.NewRegistry(nil)
	kind, ok := reg.ManagedForClass(awsstoragev1.GroupVersion.WithKind("S3BucketClass"))
	if !ok {
		t.Fatal("no managed kind for S3BucketClass")
	}
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(objs...).Build()
	return &Reconciler{client: c, kind: kind, events: resource.RecorderFor(events.NewFakeRecorder(100))}, c
}

// s3Bucket is a bucket of the class s3 in admin.
func s3Bucket(name string) *awsstoragev1.S3Bucket {
	b := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: name, Generation: 2}}
	b.Spec.ClassRef = &common.ClassReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3BucketClass", Name: "s3", Namespace: "admin"}
	return b
}

// TestFailure: a resource failed when its Synced condition is False for its current
// generation with a reason that is not a wait; the message is cut to 200 characters.
func TestFailure(t *testing.T) {
	long := strings.Repeat("x", 250)
	for name, tc := range map[string]struct {
		status     metav1.ConditionStatus
		reason     string
		message    string
		generation int64
		want       string
	}{
		"synced":                  {metav1.ConditionTrue, "ReconcileSuccess", "", 2, ""},
		"failed":                  {metav1.ConditionFalse, "ApplyFailed", "quota", 2, "ApplyFailed: quota"},
		"failed an older spec":    {metav1.ConditionFalse, "ApplyFailed", "quota", 1, ""},
		"awaiting approval":       {metav1.ConditionFalse, common.ReasonAwaitingApproval, "plan held", 2, ""},
		"state locked":            {metav1.ConditionFalse, common.ReasonStateLocked, "by run x", 2, ""},
		"a long message":          {metav1.ConditionFalse, "PlanFailed", long, 2, "PlanFailed: " + long[:200] + "..."},
		"exactly 200 characters":  {metav1.ConditionFalse, "PlanFailed", long[:200], 2, "PlanFailed: " + long[:200]},
		"unknown, still planning": {metav1.ConditionUnknown, "Planning", "", 2, ""},
	} {
		t.Run(name, func(t *testing.T) {
			b := s3Bucket("b")
			resource.SetCondition(&b.Status.Conditions, tc.generation, common.TypeSynced, tc.status, tc.reason, tc.message)
			if got := failure(b); got != tc.want {
				t.Errorf("failure = %q, want %q", got, tc.want)
			}
		})
	}
	if got := failure(s3Bucket("new")); got != "" {
		t.Errorf("a resource with no Synced condition failed: %q", got)
	}
}

// TestMemberOf: a resource is keyed by its claim when it has one, else by its name, and
// is ready only when both Ready and Synced.
func TestMemberOf(t *testing.T) {
	for name, tc := range map[string]struct {
		claim         *common.ObjectReference
		ready, synced metav1.ConditionStatus
		wantKey       string
		wantReady     bool
	}{
		"claimed, ready and synced": {&common.ObjectReference{Namespace: "shop", Name: "orders"}, metav1.ConditionTrue, metav1.ConditionTrue, "shop/orders", true},
		"unclaimed":                 {nil, metav1.ConditionTrue, metav1.ConditionTrue, "b", true},
		"ready, not synced":         {nil, metav1.ConditionTrue, metav1.ConditionFalse, "b", false},
		"synced, not ready":         {nil, metav1.ConditionFalse, metav1.ConditionTrue, "b", false},
	} {
		t.Run(name, func(t *testing.T) {
			b := s3Bucket("b")
			b.Spec.ClaimRef, b.Spec.Revision, b.Status.Revision, b.Spec.RevisionPolicy = tc.claim, "s3-2", "s3-1", common.RevisionManual
			resource.SetCondition(&b.Status.Conditions, 2, common.TypeReady, tc.ready, "r", "")
			resource.SetCondition(&b.Status.Conditions, 2, common.TypeSynced, tc.synced, "r", "")
			got := memberOf(b)
			want := member{name: "b", key: tc.wantKey, want: "s3-2", runs: "s3-1", policy: common.RevisionManual, ready: tc.wantReady}
			if tc.synced == metav1.ConditionFalse {
				want.failed = "r: "
			}
			if d := cmp.Diff(want, got, cmp.AllowUnexported(member{})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestClassOf: a resource queues the class it was made from, in the class reference's
// namespace or, without one, its own; a reference to another kind or API version of
// class queues nothing.
func TestClassOf(t *testing.T) {
	r, _ := s3Reconciler(t)
	for name, tc := range map[string]struct {
		edit func(b *awsstoragev1.S3Bucket)
		want []reconcile.Request
	}{
		"its class":          {func(*awsstoragev1.S3Bucket) {}, []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "admin", Name: "s3"}}}},
		"no class namespace": {func(b *awsstoragev1.S3Bucket) { b.Spec.ClassRef.Namespace = "" }, []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "admin", Name: "s3"}}}},
		"no class":           {func(b *awsstoragev1.S3Bucket) { b.Spec.ClassRef = nil }, nil},
		"a ModuleClass":      {func(b *awsstoragev1.S3Bucket) { b.Spec.ClassRef.Kind = "ModuleClass" }, nil},
		"another version":    {func(b *awsstoragev1.S3Bucket) { b.Spec.ClassRef.APIVersion = "storage.aws.terraplane.io/v9" }, nil},
	} {
		t.Run(name, func(t *testing.T) {
			b := s3Bucket("b")
			tc.edit(b)
			if d := cmp.Diff(tc.want, r.classOf(context.Background(), b)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if got := r.classOf(context.Background(), &terraformv1.ClassRevision{}); got != nil {
		t.Errorf("an object that is no managed resource queued %v", got)
	}
}

// TestFleet: the fleet is the class's resources in its namespace, each following new
// revisions by its own policy, else the class's, else automatically.
func TestFleet(t *testing.T) {
	class := &awsstoragev1.S3BucketClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "s3", UID: "c-uid"}}
	class.SpecTemplate.RevisionPolicy = common.RevisionManual
	own, inherits, other, elsewhere := s3Bucket("own"), s3Bucket("inherits"), s3Bucket("other"), s3Bucket("elsewhere")
	own.Spec.RevisionPolicy = common.RevisionAutomatic
	other.Spec.ClassRef.Name = "s4"
	elsewhere.Namespace = "team"
	r, _ := s3Reconciler(t, own, inherits, other, elsewhere)
	fleet, err := r.fleet(context.Background(), class)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range fleet {
		got[m.name] = m.automatic
	}
	if d := cmp.Diff(map[string]bool{"own": true, "inherits": false}, got); d != "" {
		t.Errorf("fleet, automatic by name (-want +got):\n%s", d)
	}
	class.SpecTemplate.RevisionPolicy = ""
	fleet, _ = r.fleet(context.Background(), class)
	for _, m := range fleet {
		if !m.automatic {
			t.Errorf("%s does not follow new revisions though neither it nor its class says otherwise", m.name)
		}
	}
}

// TestUpsert adds a revision once: one already listed by name is not added again.
func TestUpsert(t *testing.T) {
	rev := func(name string) terraformv1.ClassRevision {
		return terraformv1.ClassRevision{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	revs := []terraformv1.ClassRevision{rev("s3-1"), rev("s3-2")}
	if got := upsert(revs, &terraformv1.ClassRevision{ObjectMeta: metav1.ObjectMeta{Name: "s3-2"}}); len(got) != 2 {
		t.Errorf("an existing revision was added again: %d revisions", len(got))
	}
	n := rev("s3-3")
	if got := upsert(revs, &n); len(got) != 3 || got[2].Name != "s3-3" {
		t.Errorf("a new revision was not added last: %v", got)
	}
}

// TestPrune: revisions beyond Keep go unless the latest or named by a resource (to run
// or running); one already gone is no error.
func TestPrune(t *testing.T) {
	var revs []terraformv1.ClassRevision
	var stored []client.Object
	for i := 1; i <= Keep+4; i++ {
		rev := terraformv1.ClassRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: fmt.Sprintf("s3-%d", i)}, Spec: terraformv1.ClassRevisionSpec{Revision: int64(i)}}
		revs = append(revs, rev)
		if i != 4 { // s3-4 is deleted already
			stored = append(stored, rev.DeepCopy())
		}
	}
	r, c := s3Reconciler(t, stored...)
	fleet := []member{{want: "s3-2"}, {runs: "s3-3"}}
	kept, err := r.prune(context.Background(), revs, &revs[0], fleet)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range kept {
		names = append(names, k.Name)
	}
	want := []string{"s3-1", "s3-2", "s3-3"}
	for i := 5; i <= Keep+4; i++ {
		want = append(want, fmt.Sprintf("s3-%d", i))
	}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	list := &terraformv1.ClassRevisionList{}
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != len(want) {
		t.Errorf("%d revisions stored, want %d", len(list.Items), len(want))
	}
}

// TestModuleClassWaits: a ModuleClass that is not Ready has no revision made: the
// reconcile waits on a timer (the class's own status says why); a user error waits the
// same way, and any other error does not; a class that is gone is nothing to do.
func TestModuleClassWaits(t *testing.T) {
	reg := kinds.NewRegistry(nil)
	kind, ok := reg.ManagedForClass(terraformv1.GroupVersion.WithKind("ModuleClass"))
	if !ok {
		t.Fatal("no managed kind for ModuleClass")
	}
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "gold", UID: "g-uid"}}
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(class).WithStatusSubresource(class).Build()
	r := &Reconciler{client: c, kind: kind, events: resource.RecorderFor(events.NewFakeRecorder(100))}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(class)})
	if err != nil || res.RequeueAfter != retry {
		t.Errorf("Reconcile of a class not Ready = %+v, %v; want a retry after %s", res, err, retry)
	}
	list := &terraformv1.ClassRevisionList{}
	if err := c.List(context.Background(), list); err != nil || len(list.Items) != 0 {
		t.Errorf("a class not Ready got revisions: %v, %v", list.Items, err)
	}
	if !revision.Makeable(&awsstoragev1.S3BucketClass{}) {
		t.Error("a class without conditions of its own is not ready")
	}
	for err, want := range map[error]bool{
		errNotReady: true, fmt.Errorf("read: %w", resource.UserErrorf("BadModule", "no main.tf")): true, errors.New("etcd is down"): false,
	} {
		if got := r.waits(err); got != want {
			t.Errorf("waits(%v) = %v, want %v", err, got, want)
		}
	}
	if res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "admin", Name: "gone"}}); err != nil || res.RequeueAfter != 0 {
		t.Errorf("Reconcile of a class that is gone = %+v, %v; want nothing", res, err)
	}
}
