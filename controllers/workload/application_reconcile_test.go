package workload

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/controllers/kubernetes"
	"terraplane.io/terraplane/internal/resource"
)

const ns = "team-a"

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = workloadv1.AddToScheme(s)
	_ = kubernetesv1.AddToScheme(s)
	_ = computev1.AddToScheme(s)
	return s
}

// application is application team-a/web with templates names, on cluster (nil: unscheduled).
func application(cluster *workloadv1.ClusterReference, names ...string) *workloadv1.KubernetesApplication {
	a := app(names...)
	a.Namespace, a.Name, a.UID, a.Generation = ns, "web", "app-uid", 1
	a.Status.ClusterRef = cluster
	for i := range a.Spec.ResourceTemplates {
		a.Spec.ResourceTemplates[i].Spec.Template = workloadv1.Template{APIVersion: "v1", Kind: "ConfigMap",
			Metadata: workloadv1.TemplateMetadata{Namespace: "apps", Name: names[i]}}
	}
	return a
}

var (
	east = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: "east"}
	west = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: "west"}
)

// appResource is resource name of application web, made for cluster target.
func appResource(name string, target *workloadv1.ClusterReference, submittedTo *workloadv1.ClusterReference, state workloadv1.ResourceState) *workloadv1.KubernetesApplicationResource {
	r := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "x"},
		Finalizers:      []string{resource.Finalizer},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "workload.terraplane.io/v1alpha1", Kind: "KubernetesApplication", Name: "web", UID: "app-uid", Controller: ptr.To(true)}}}}
	r.Spec.Template = workloadv1.Template{APIVersion: "v1", Kind: "ConfigMap", Metadata: workloadv1.TemplateMetadata{Namespace: "apps", Name: name}}
	r.Spec.TargetRef, r.Status.ClusterRef, r.Status.State = target, submittedTo, state
	return r
}

// appResult is what an application reconcile left.
type appResult struct {
	State  workloadv1.ApplicationState
	Synced string // status/reason
	// Progress is how kstatus reads it: Stalled/<reason>, Reconciling, or Applied
	// (observedGeneration caught up, neither condition).
	Progress  string
	Resources []string
	Targets   []string // of the resources, by name order
	Gone      bool
	Requeue   time.Duration
}

func reconcileApp(t *testing.T, objs ...client.Object) appResult {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(objs...).
		WithStatusSubresource(&workloadv1.KubernetesApplication{}, &workloadv1.KubernetesApplicationResource{}).Build()
	r := &ApplicationReconciler{client: c, opts: kubernetes.Options{}.WithDefaults(), recorder: resource.RecorderFor(events.NewFakeRecorder(10))}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "web"}})
	if err != nil {
		t.Fatal(err)
	}
	got := appResult{Requeue: res.RequeueAfter}
	a := &workloadv1.KubernetesApplication{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, a); err != nil {
		got.Gone = true
	} else if cond := meta.FindStatusCondition(a.Status.Conditions, common.TypeSynced); cond != nil {
		got.State, got.Synced = a.Status.State, string(cond.Status)+"/"+cond.Reason
		got.Progress = progress(a.Status.Conditions, a.Status.ObservedGeneration, a.Generation)
	}
	list := &workloadv1.KubernetesApplicationResourceList{}
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	for _, res := range list.Items {
		if !res.DeletionTimestamp.IsZero() {
			continue
		}
		got.Resources = append(got.Resources, res.Name)
		target := ""
		if res.Spec.TargetRef != nil {
			target = res.Spec.TargetRef.Name
		}
		got.Targets = append(got.Targets, target)
	}
	return got
}

// progress is how kstatus reads conds and observed of an object at generation gen.
func progress(conds []metav1.Condition, observed, gen int64) string {
	switch {
	case meta.IsStatusConditionTrue(conds, common.TypeStalled):
		return "Stalled/" + meta.FindStatusCondition(conds, common.TypeStalled).Reason
	case meta.IsStatusConditionTrue(conds, common.TypeReconciling):
		return "Reconciling"
	case observed == gen:
		return "Applied"
	}
	return ""
}

// TestApplicationReconcile: what a reconcile makes of an application's resources, and
// its status: its state, Synced, and Reconciling until every resource is submitted, or
// Stalled when someone must act (its templates, a conflict, resources that failed).
func TestApplicationReconcile(t *testing.T) {
	succeeded := "True/" + common.ReasonReconcileSuccess
	foreign := appResource("a", east, nil, "")
	foreign.OwnerReferences = nil
	deleted := application(east, "a")
	deleted.Finalizers, deleted.DeletionTimestamp = []string{resource.Finalizer}, ptr.To(metav1.Now())
	cases := map[string]struct {
		objs []client.Object
		want appResult
	}{
		"unscheduled: nothing is made": {
			objs: []client.Object{application(nil, "a")},
			want: appResult{State: workloadv1.ApplicationStatePending, Synced: succeeded, Progress: "Reconciling"},
		},
		"scheduled: one resource per template, for its cluster": {
			objs: []client.Object{application(east, "a", "b")},
			want: appResult{State: workloadv1.ApplicationStateScheduled, Synced: succeeded, Progress: "Reconciling", Resources: []string{"a", "b"}, Targets: []string{"east", "east"}},
		},
		"all submitted": {
			objs: []client.Object{application(east, "a"), appResource("a", east, east, workloadv1.ResourceStateSubmitted)},
			want: appResult{State: workloadv1.ApplicationStateSubmitted, Synced: succeeded, Progress: "Applied", Resources: []string{"a"}, Targets: []string{"east"}},
		},
		"its resource failed": {
			objs: []client.Object{application(east, "a"), appResource("a", east, nil, workloadv1.ResourceStateFailed)},
			want: appResult{State: workloadv1.ApplicationStateFailed, Synced: succeeded, Progress: "Stalled/Failed", Resources: []string{"a"}, Targets: []string{"east"}},
		},
		"a removed template's resource goes": {
			objs: []client.Object{application(east, "a"), appResource("a", east, nil, ""), appResource("old", east, nil, "")},
			want: appResult{State: workloadv1.ApplicationStateScheduled, Synced: succeeded, Progress: "Reconciling", Resources: []string{"a"}, Targets: []string{"east"}},
		},
		"a resource it does not control is never adopted": {
			objs: []client.Object{application(east, "a"), foreign},
			want: appResult{State: workloadv1.ApplicationStateScheduled, Synced: "False/ResourceConflict", Progress: "Stalled/ResourceConflict", Resources: []string{"a"}, Targets: []string{"east"}, Requeue: 30 * time.Second},
		},
		"moved: a resource that submitted nothing is made again": {
			objs: []client.Object{application(west, "a"), appResource("a", east, nil, "")},
			want: appResult{State: workloadv1.ApplicationStateScheduled, Synced: succeeded, Progress: "Reconciling"},
		},
		"moved: a resource that submitted something stays": {
			objs: []client.Object{application(west, "a"), appResource("a", east, east, workloadv1.ResourceStateSubmitted)},
			want: appResult{State: workloadv1.ApplicationStateSubmitted, Synced: "False/ResourceSubmitted", Progress: "Stalled/ResourceSubmitted", Resources: []string{"a"}, Targets: []string{"east"}, Requeue: 30 * time.Second},
		},
		"templates that do not fit the selector": {
			objs: []client.Object{application(east, "a", "a")},
			want: appResult{Synced: "False/DuplicateTemplate", Progress: "Stalled/DuplicateTemplate", Requeue: 30 * time.Second},
		},
		"deleted: its resources go first": {
			objs: []client.Object{deleted, appResource("a", east, east, workloadv1.ResourceStateSubmitted)},
			want: appResult{State: workloadv1.ApplicationStatePending, Synced: "True/DeletingResources", Progress: "Reconciling", Requeue: 5 * time.Second},
		},
		"deleted: with no resources left it goes": {
			objs: []client.Object{deleted},
			want: appResult{Gone: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, reconcileApp(t, tc.objs...)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplicationWrites: a resource is written when its template changed, and not again
// once it is up to date.
func TestApplicationWrites(t *testing.T) {
	cases := map[string]struct {
		annotations map[string]string // of the template
		writes      []string          // resourceVersion after each of two reconciles
	}{
		"a changed template is written once": {annotations: map[string]string{"v": "2"}, writes: []string{"8", "8"}},
		"an unchanged template is not":       {writes: []string{"7", "7"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := application(east, "a")
			a.Spec.ResourceTemplates[0].Metadata.Annotations = tc.annotations
			have := appResource("a", east, nil, "")
			have.ResourceVersion = "7"
			c := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(a, have).WithStatusSubresource(a, have).Build()
			r := &ApplicationReconciler{client: c, opts: kubernetes.Options{}.WithDefaults(), recorder: resource.RecorderFor(events.NewFakeRecorder(10))}
			var got []string
			for range tc.writes {
				if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(a)}); err != nil {
					t.Fatal(err)
				}
				res := &workloadv1.KubernetesApplicationResource{}
				if err := c.Get(context.Background(), client.ObjectKeyFromObject(have), res); err != nil {
					t.Fatal(err)
				}
				got = append(got, res.ResourceVersion)
			}
			if diff := cmp.Diff(tc.writes, got); diff != "" {
				t.Errorf("resourceVersions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSame: a resource is the same as its template's when labels, annotations and spec
// match as JSON: key order and empty maps do not count, status does not either.
func TestSame(t *testing.T) {
	type res = workloadv1.KubernetesApplicationResource
	cases := map[string]struct {
		edit func(have, want *res)
		same bool
	}{
		"identical":                 {func(_, _ *res) {}, true},
		"empty and nil annotations": {func(have, want *res) { have.Annotations, want.Annotations = nil, map[string]string{} }, true},
		"empty and nil labels":      {func(have, want *res) { have.Labels, want.Labels = map[string]string{}, nil }, true},
		"labels removed":            {func(_, want *res) { want.Labels = nil }, false},
		"another status":            {func(have, _ *res) { have.Status.State = "Failed" }, true},
		"another label":             {func(_, want *res) { want.Labels["tier"] = "web" }, false},
		"another template":          {func(_, want *res) { want.Spec.Template.Metadata.Name = "b" }, false},
		"another Secret to propagate": {func(_, want *res) {
			want.Spec.Secrets = append(want.Spec.Secrets, corev1Ref("s"))
		}, false},
	}
	for name, tc := range cases {
		have, want := appResource("a", east, nil, ""), appResource("a", east, nil, "")
		tc.edit(have, want)
		if got := same(have, want); got != tc.same {
			t.Errorf("%s: same = %v, want %v", name, got, tc.same)
		}
	}
}

func corev1Ref(name string) corev1.LocalObjectReference {
	return corev1.LocalObjectReference{Name: name}
}
