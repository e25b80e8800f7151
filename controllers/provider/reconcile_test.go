package provider

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

func usageScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{awsv1.AddToScheme, awsstoragev1.AddToScheme, kubernetesv1.AddToScheme, workloadv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestUserKinds: each provider kind gets the managed kinds that name it, sorted; a
// kubernetes ProviderConfig also gets the application resources placed on its cluster;
// a kind without a provider gets none.
func TestUserKinds(t *testing.T) {
	reg := registry.New(usageScheme(t))
	reg.AddManaged(registry.ManagedKind{GVK: awsstoragev1.S3BucketGroupVersionKind, ProviderGVK: awsv1.ProviderGroupVersionKind})
	reg.AddManaged(registry.ManagedKind{GVK: kubernetesv1.GroupVersion.WithKind("Object"), ProviderGVK: kubernetesv1.GroupVersion.WithKind("ProviderConfig")})
	reg.AddManaged(registry.ManagedKind{GVK: kubernetesv1.GroupVersion.WithKind("Cluster"), ProviderGVK: kubernetesv1.GroupVersion.WithKind("ProviderConfig")})
	got := map[string][]string{}
	for gvk, kinds := range userKinds(reg) {
		for _, k := range kinds {
			got[gvk.Kind] = append(got[gvk.Kind], k.gvk.Kind)
			if k.newObj() == nil || k.newList() == nil {
				t.Errorf("%s: no constructors", k.gvk.Kind)
			}
		}
	}
	want := map[string][]string{"Provider": {"S3Bucket"}, "ProviderConfig": {"Cluster", "KubernetesApplicationResource", "Object"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user kinds (-want +got):\n%s", diff)
	}
}

// TestForUser: a user maps to the providers it names.
func TestForUser(t *testing.T) {
	r := &Reconciler{}
	b := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "b"}}
	b.Spec.ProviderRef = &common.LocalReference{Name: "aws"}
	reqs := r.forUser(userKind{names: managedProviders})(context.Background(), b)
	if diff := cmp.Diff([]ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: "admin", Name: "aws"}}}, reqs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestReconcile: a provider is held while it exists, told who uses it, and let go once
// deleted only when the API server (not only the cache) shows no user.
func TestReconcile(t *testing.T) {
	now := metav1.Now()
	provider := func(deleting bool, finalizers ...string) *awsv1.Provider {
		p := &awsv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "aws", Finalizers: finalizers}}
		if deleting {
			p.DeletionTimestamp = &now
		}
		return p
	}
	bucket := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "b"}}
	bucket.Spec.ProviderRef = &common.LocalReference{Name: "aws"}
	cases := map[string]struct {
		provider      *awsv1.Provider
		cached, live  []client.Object // users the cache and the API server hold
		wantGone      bool
		wantFinalizer bool
		wantReason    string
		wantUsers     int
		wantEvents    int
	}{
		"new, unused":           {provider(false), nil, nil, false, true, ReasonUnused, 0, 0},
		"new, in use":           {provider(false), []client.Object{bucket}, []client.Object{bucket}, false, true, ReasonInUse, 1, 0},
		"deleted, unused":       {provider(true, common.InUseFinalizer), nil, nil, true, false, "", 0, 0},
		"deleted, in use":       {provider(true, common.InUseFinalizer), []client.Object{bucket}, []client.Object{bucket}, false, true, ReasonDeletionBlocked, 1, 1},
		"deleted, cache behind": {provider(true, common.InUseFinalizer), nil, []client.Object{bucket}, false, true, ReasonDeletionBlocked, 1, 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := usageScheme(t)
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(append([]client.Object{tc.provider.DeepCopy()}, copies(tc.cached)...)...).
				WithStatusSubresource(&awsv1.Provider{}).Build()
			live := fake.NewClientBuilder().WithScheme(s).WithObjects(copies(tc.live)...).Build()
			rec := events.NewFakeRecorder(10)
			reg := registry.New(s)
			reg.AddManaged(registry.ManagedKind{GVK: awsstoragev1.S3BucketGroupVersionKind, ProviderGVK: awsv1.ProviderGroupVersionKind})
			r := &Reconciler{client: c, reader: live, gvk: awsv1.ProviderGroupVersionKind, users: userKinds(reg)[awsv1.ProviderGroupVersionKind],
				recorder: resource.RecorderFor(rec), newObj: func() (Provider, error) { return &awsv1.Provider{}, nil }}
			key := client.ObjectKeyFromObject(tc.provider)
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			got := &awsv1.Provider{}
			err := c.Get(ctx, key, got)
			if gone := err != nil; gone != tc.wantGone {
				t.Fatalf("provider gone = %v (%v), want %v", gone, err, tc.wantGone)
			}
			if len(rec.Events) != tc.wantEvents {
				t.Errorf("%d events, want %d", len(rec.Events), tc.wantEvents)
			}
			if tc.wantGone {
				return
			}
			if has := len(got.Finalizers) == 1 && got.Finalizers[0] == common.InUseFinalizer; has != tc.wantFinalizer {
				t.Errorf("finalizers %v, want the in-use finalizer: %v", got.Finalizers, tc.wantFinalizer)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, common.TypeInUse)
			if cond == nil || cond.Reason != tc.wantReason || got.Status.Users != tc.wantUsers {
				t.Errorf("status %+v, want InUse %s with %d users", got.Status, tc.wantReason, tc.wantUsers)
			}
		})
	}
}

// TestRecountIsSpacedOut: a write that only recounts users waits until recountEvery has
// passed since the last write; a change of reason is written at once.
func TestRecountIsSpacedOut(t *testing.T) {
	ctx := context.Background()
	s := usageScheme(t)
	p := &awsv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "aws"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(p).WithStatusSubresource(p).Build()
	r := &Reconciler{client: c, gvk: awsv1.ProviderGroupVersionKind, recorder: resource.RecorderFor(events.NewFakeRecorder(10))}
	one := []user{{"S3Bucket", "admin", "a"}}
	two := append(one, user{"S3Bucket", "admin", "b"})
	key := client.ObjectKeyFromObject(p)
	longAgo := func() { r.reported.Store(key, time.Now().Add(-2*recountEvery)) }
	steps := []struct {
		name      string
		before    func()
		users     []user
		wantWait  bool
		wantUsers int
	}{
		{"first write", nil, one, false, 1},
		{"a recount right after", nil, two, true, 1},
		{"a recount after recountEvery", longAgo, two, false, 2},
		{"a new reason right after", nil, nil, false, 0},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		got := &awsv1.Provider{}
		if err := c.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		res, err := r.finish(ctx, got, st.users, nil)
		if err != nil {
			t.Fatal(err)
		}
		if waited := res.RequeueAfter > 0 && res.RequeueAfter <= recountEvery; waited != st.wantWait {
			t.Errorf("%s: requeue %v, want a wait: %v", st.name, res.RequeueAfter, st.wantWait)
		}
		if err := c.Get(ctx, key, got); err != nil || got.Status.Users != st.wantUsers {
			t.Errorf("%s: %d users written, want %d", st.name, got.Status.Users, st.wantUsers)
		}
	}
}

func copies(objs []client.Object) []client.Object {
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.DeepCopyObject().(client.Object))
	}
	return out
}
