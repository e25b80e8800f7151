package claim

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// bucketReconciler is the Bucket claim reconciler over a fake client holding objs and a
// first revision of each class among them (withFirstRevisions).
func bucketReconciler(t *testing.T, objs ...client.Object) (*Reconciler, client.Client) {
	t.Helper()
	return bucketReconcilerOver(t, withFirstRevisions(t, objs)...)
}

// bucketReconcilerOver is the Bucket claim reconciler over a fake client holding objs.
func bucketReconcilerOver(t *testing.T, objs ...client.Object) (*Reconciler, client.Client) {
	t.Helper()
	reg := kinds.NewRegistry(nil)
	kind, ok := reg.Claim(kinds.BucketGVK)
	if !ok {
		t.Fatal("no Bucket claim kind")
	}
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(objs...).
		WithStatusSubresource(&storagev1.Bucket{}, &awsstoragev1.S3Bucket{}).
		WithIndex(&storagev1.Bucket{}, unboundIndex, unboundKeys).Build()
	return &Reconciler{client: c, reader: c, cache: c, reg: reg, kind: kind, opts: Options{UserErrorRetry: 30e9},
		recorder: resource.RecorderFor(events.NewFakeRecorder(20))}, c
}

// withFirstRevisions is objs with a first revision of each class among them that is due
// one (revision.FirstDue), named its latest: what the revision controller does at once.
func withFirstRevisions(t *testing.T, objs []client.Object) []client.Object {
	t.Helper()
	mod, err := module.FromFiles(map[string][]byte{"main.tf": []byte(`variable "bucket_name" {}`)})
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(objs)
	for _, o := range objs {
		class, ok := o.(revision.Class)
		if !ok || !revision.FirstDue(class) {
			continue
		}
		gvk, err := apiutil.GVKForObject(o, kinds.NewScheme())
		if err != nil {
			t.Fatal(err)
		}
		rev, err := revision.Build(class, gvk, mod, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		class.GetClassRevisions().LatestRevision = rev.Name
		out = append(out, rev)
	}
	return out
}

func portableClass(name, classNS string, labels map[string]string) *storagev1.BucketClass {
	return &storagev1.BucketClass{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Labels: labels},
		ClassRef: common.ClassReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3BucketClass", Name: "s3", Namespace: classNS}}
}

func s3Class(ns string, allowed ...string) *awsstoragev1.S3BucketClass {
	c := &awsstoragev1.S3BucketClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3"}}
	c.SpecTemplate.ProviderRef = &common.LocalReference{Name: "aws"}
	c.SpecTemplate.ReclaimPolicy = common.ReclaimRetain
	c.SpecTemplate.WriteConnectionSecretsToNamespace = "secrets"
	c.SpecTemplate.ForProvider.Encryption = "aws:kms"
	c.SpecTemplate.Timeout = &metav1.Duration{Duration: 45 * time.Minute}
	c.SpecTemplate.DriftInterval = &metav1.Duration{Duration: 6 * time.Hour}
	if len(allowed) > 0 {
		c.AllowedNamespaces = &common.AllowedNamespaces{Names: allowed}
	}
	return c
}

func bucketClaim(class string) *storagev1.Bucket {
	b := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "b", UID: "uid-1"}}
	if class != "" {
		b.Spec.ClassRef = &common.LocalReference{Name: class}
	}
	b.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "b-conn"}
	b.Spec.Versioning = true
	return b
}

// TestReconcileWaitsForFirstRevision: while a class is about to make its first revision,
// a claim of it makes no resource (one made then would change right after) and says why.
func TestReconcileWaitsForFirstRevision(t *testing.T) {
	ctx := context.Background()
	r, c := bucketReconcilerOver(t, portableClass("fast", "admin", nil), s3Class("admin", "team"), bucketClaim("fast"))
	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "b"}})
	if err != nil || res.RequeueAfter == 0 {
		t.Fatalf("Reconcile = %+v, %v; want a wait on a timer", res, err)
	}
	list := &awsstoragev1.S3BucketList{}
	if err := c.List(ctx, list); err != nil || len(list.Items) != 0 {
		t.Errorf("made %d S3Buckets before the class's first revision (%v)", len(list.Items), err)
	}
	b := &storagev1.Bucket{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "b"}, b); err != nil {
		t.Fatal(err)
	}
	synced := meta.FindStatusCondition(b.Status.Conditions, common.TypeSynced)
	if synced == nil || synced.Reason != ReasonClassRevisionPending || !strings.Contains(synced.Message, "S3BucketClass admin/s3") {
		t.Errorf("Synced = %+v; want %s naming the class", synced, ReasonClassRevisionPending)
	}
}

// TestReconcileProvisions: a claim gets a managed resource made from its class, named
// for the claim, carrying the class's template and the claim's fields, and is then bound.
func TestReconcileProvisions(t *testing.T) {
	ctx := context.Background()
	r, c := bucketReconciler(t, portableClass("fast", "admin", nil), s3Class("admin", "team"), bucketClaim("fast"))
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "b"}}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	mg := &awsstoragev1.S3Bucket{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "admin", Name: "bucket-uid-1"}, mg); err != nil {
		t.Fatalf("no S3Bucket: %v", err)
	}
	class := &awsstoragev1.S3BucketClass{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "admin", Name: "s3"}, class); err != nil {
		t.Fatal(err)
	}
	wantSpec := common.ManagedSpec{
		Revision:    class.Status.LatestRevision,
		ProviderRef: &common.LocalReference{Name: "aws"}, ReclaimPolicy: common.ReclaimRetain,
		WriteConnectionSecretToRef: &common.SecretReference{Name: "bucket-uid-1", Namespace: "secrets"},
		ClaimRef:                   &common.ObjectReference{APIVersion: "storage.terraplane.io/v1alpha1", Kind: "Bucket", Namespace: "team", Name: "b", UID: "uid-1"},
		ClassRef:                   &common.ClassReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3BucketClass", Namespace: "admin", Name: "s3"},
		Timing:                     common.Timing{Timeout: &metav1.Duration{Duration: 45 * time.Minute}, DriftInterval: &metav1.Duration{Duration: 6 * time.Hour}},
	}
	if diff := cmp.Diff(wantSpec, mg.Spec.ManagedSpec); diff != "" {
		t.Errorf("managed spec (-want +got):\n%s", diff)
	}
	if !mg.Spec.ForProvider.Versioning || mg.Spec.ForProvider.Encryption != "aws:kms" || len(mg.Finalizers) != 1 {
		t.Errorf("forProvider %+v, finalizers %v; want the class's encryption, the claim's versioning and the finalizer", mg.Spec.ForProvider, mg.Finalizers)
	}
	claim := &storagev1.Bucket{}
	if err := c.Get(ctx, req.NamespacedName, claim); err != nil {
		t.Fatal(err)
	}
	if ref := claim.Spec.ResourceRef; ref == nil || ref.Name != "bucket-uid-1" || ref.Namespace != "admin" || len(claim.Finalizers) != 1 {
		t.Fatalf("claim resourceRef %+v, finalizers %v", ref, claim.Finalizers)
	}
	res, err := r.Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, req.NamespacedName, claim); err != nil {
		t.Fatal(err)
	}
	ready := meta.FindStatusCondition(claim.Status.Conditions, common.TypeReady)
	if claim.Status.BindingPhase != common.BindingPhaseBound || ready == nil || ready.Reason != ReasonWaiting {
		t.Errorf("status %+v; want Bound, waiting for the resource", claim.Status)
	}
	if res.RequeueAfter != 0 {
		t.Errorf("a claim waiting for its resource: %+v; want no timer (the resource's status write wakes it)", res)
	}
}

// TestReconcileRefuses: each way a claim cannot be provisioned or bound is a user error
// the claim reports in Synced, and nothing is made.
func TestReconcileRefuses(t *testing.T) {
	bound := func(ref *common.ObjectReference, phase common.BindingPhase) *awsstoragev1.S3Bucket {
		mg := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "static"}}
		mg.Spec.ClaimRef = ref
		mg.Status.BindingPhase = phase
		return mg
	}
	static := func(kind string) *storagev1.Bucket {
		b := bucketClaim("")
		b.Spec.ResourceRef = &common.ObjectReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: kind, Namespace: "team", Name: "static"}
		return b
	}
	cases := map[string]struct {
		objs   []client.Object
		reason string
	}{
		"no default class": {[]client.Object{bucketClaim("")}, "NoDefaultClass"},
		"two default classes": {[]client.Object{bucketClaim(""), portableClass("a", "admin", map[string]string{common.DefaultClassLabel: "true"}),
			portableClass("b", "admin", map[string]string{common.DefaultClassLabel: "true"})}, "MultipleDefaultClasses"},
		"a missing class":               {[]client.Object{bucketClaim("gone")}, ReasonClassNotFound},
		"a missing non-portable":        {[]client.Object{bucketClaim("fast"), portableClass("fast", "admin", nil)}, ReasonClassNotFound},
		"a class that does not consent": {[]client.Object{bucketClaim("fast"), portableClass("fast", "admin", nil), s3Class("admin")}, common.ReasonReferenceNotAllowed},
		"an unsupported class": {[]client.Object{bucketClaim("fast"), &storagev1.BucketClass{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "fast"},
			ClassRef: common.ClassReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x"}}}, "UnsupportedClass"},
		"a resource of the wrong kind": {[]client.Object{static("RDSInstance")}, "IncompatibleResource"},
		"a missing resource":           {[]client.Object{static("S3Bucket")}, "ResourceNotFound"},
		"a resource bound elsewhere": {[]client.Object{static("S3Bucket"), bound(&common.ObjectReference{Kind: "Bucket", Namespace: "team", Name: "other", UID: "x"}, common.BindingPhaseBound)},
			"ResourceBoundElsewhere"},
		"a resource of an earlier claim": {[]client.Object{static("S3Bucket"), bound(&common.ObjectReference{Kind: "Bucket", Namespace: "team", Name: "b", UID: "earlier"}, common.BindingPhaseReleased)},
			"ResourceReleased"},
		"a released resource": {[]client.Object{static("S3Bucket"), bound(nil, common.BindingPhaseReleased)}, "ResourceReleased"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r, c := bucketReconciler(t, tc.objs...)
			req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "b"}}
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			claim := &storagev1.Bucket{}
			if err := c.Get(ctx, req.NamespacedName, claim); err != nil {
				t.Fatal(err)
			}
			synced := meta.FindStatusCondition(claim.Status.Conditions, common.TypeSynced)
			if synced == nil || synced.Status != metav1.ConditionFalse || synced.Reason != tc.reason {
				t.Errorf("Synced %+v, want False %s", synced, tc.reason)
			}
			list := &awsstoragev1.S3BucketList{}
			if err := c.List(ctx, list); err != nil {
				t.Fatal(err)
			}
			for _, mg := range list.Items {
				if strings.HasPrefix(mg.Name, "bucket-") {
					t.Errorf("%s was made", mg.Name)
				}
			}
		})
	}
}

// TestDefaultClass: a claim without a class gets the namespace's one default class.
func TestDefaultClass(t *testing.T) {
	ctx := context.Background()
	r, c := bucketReconciler(t, bucketClaim(""), portableClass("std", "admin", map[string]string{common.DefaultClassLabel: "true"}), portableClass("other", "admin", nil))
	claim := &storagev1.Bucket{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "b"}, claim); err != nil {
		t.Fatal(err)
	}
	if err := r.defaultClass(ctx, claim); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil || claim.Spec.ClassRef == nil || claim.Spec.ClassRef.Name != "std" {
		t.Errorf("classRef %+v, %v; want std written", claim.Spec.ClassRef, err)
	}
}

// staleClient reads one object as it was, as an informer cache that lags a write does.
type staleClient struct {
	client.Client
	key   client.ObjectKey
	stale client.Object
}

func (s staleClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key != s.key {
		return s.Client.Get(ctx, key, obj, opts...)
	}
	return s.Client.Scheme().Convert(s.stale.DeepCopyObject(), obj, nil)
}

// TestStaleReadSendsNoSecondEvent: a reconcile that reads the claim from before the last
// status write (a lagging cache, queued by a class's status write) loses the write, and
// sends no second event for a problem already reported.
func TestStaleReadSendsNoSecondEvent(t *testing.T) {
	ctx := context.Background()
	rec := events.NewFakeRecorder(10)
	claim := bucketClaim("")
	claim.Finalizers = []string{resource.Finalizer}
	r, c := bucketReconciler(t, claim)
	r.recorder = resource.RecorderFor(rec)
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "b"}}
	stale := &storagev1.Bucket{}
	if err := c.Get(ctx, req.NamespacedName, stale); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	r.client = staleClient{Client: c, key: req.NamespacedName, stale: stale}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	if len(got) != 1 || !strings.Contains(got[0], "NoDefaultClass") {
		t.Errorf("events %q, want one NoDefaultClass", got)
	}
}
