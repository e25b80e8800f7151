package scheduler

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

func schedulerScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, kubernetesv1.AddToScheme, computev1.AddToScheme, workloadv1.AddToScheme, scalingv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

var readyCond = metav1.Condition{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: "Available", LastTransitionTime: metav1.Now()}

// usableCluster is a Bound, Ready KubernetesCluster claim with a connection Secret.
func usableCluster(name string, labels map[string]string) *computev1.KubernetesCluster {
	c := &computev1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Labels: labels}}
	c.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: name + "-conn"}
	c.Status.BindingPhase = common.BindingPhaseBound
	c.Status.Conditions = []metav1.Condition{readyCond}
	return c
}

// placedApp is an application already placed on claim cluster.
func placedApp(name, cluster string) *workloadv1.KubernetesApplication {
	a := &workloadv1.KubernetesApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, UID: types.UID(name + "-uid")}}
	if cluster != "" {
		a.Status.ClusterRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: cluster, Namespace: "apps"}
	}
	return a
}

// TestReconcilePlaces: an application goes to the least loaded ready matching cluster
// (ties by name), to a usable ProviderConfig it names, or gets Scheduled=False saying why.
func TestReconcilePlaces(t *testing.T) {
	east := map[string]string{"region": "east"}
	unbound := usableCluster("c-unbound", east)
	unbound.Status.BindingPhase = common.BindingPhaseUnbound
	pcReady := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "edge"}}
	pcReady.Status.Conditions = []metav1.Condition{readyCond}
	pcNew := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "fresh"}}
	pcClosed := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "closed"}}
	pcClosed.Status.Conditions = []metav1.Condition{readyCond}
	withSelector := func(sel *metav1.LabelSelector) *workloadv1.KubernetesApplication {
		a := placedApp("new", "")
		a.Spec.ClusterSelector = sel
		return a
	}
	withPC := func(name, ns string) *workloadv1.KubernetesApplication {
		a := placedApp("new", "")
		a.Spec.ProviderConfigRef = &workloadv1.ProviderConfigReference{Name: name, Namespace: ns}
		return a
	}
	gpu := map[string]string{"pool": "gpu"}
	member := func(name string) *computev1.KubernetesCluster {
		return usableCluster(name, map[string]string{"pool": "gpu", common.PoolLabel: "gpu"})
	}
	pool := &scalingv1.ResourcePool{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "gpu"}, Spec: scalingv1.ResourcePoolSpec{
		ClaimTemplate: scalingv1.ClaimTemplate{APIVersion: "compute.terraplane.io/v1alpha1", Kind: "KubernetesCluster", Labels: gpu},
		Autoscale:     &scalingv1.Autoscale{ApplicationsPerCluster: 2, Max: 3}}}
	pool.Status.Clusters = []scalingv1.ClusterMember{{Name: "gpu-a", Applications: 2, Ready: true}}
	cases := map[string]struct {
		app         *workloadv1.KubernetesApplication
		objs        []client.Object
		wantCluster string // ClusterReference.String(); empty: not scheduled
		wantReason  string
		wantMessage string
	}{
		"least loaded": {withSelector(&metav1.LabelSelector{MatchLabels: east}),
			[]client.Object{usableCluster("a", east), usableCluster("b", east), usableCluster("z", east), placedApp("x1", "a"), placedApp("x2", "a"), placedApp("x3", "b")},
			"KubernetesCluster/apps/z", ReasonScheduled, "fewest applications (0) among 3"},
		"ties by name": {withSelector(nil),
			[]client.Object{usableCluster("b", east), usableCluster("a", nil)},
			"KubernetesCluster/apps/a", ReasonScheduled, "placed on KubernetesCluster a"},
		"only matching clusters": {withSelector(&metav1.LabelSelector{MatchLabels: east}),
			[]client.Object{usableCluster("a", nil), usableCluster("b", east), placedApp("x1", "b")},
			"KubernetesCluster/apps/b", ReasonScheduled, "fewest applications (1) among 1"},
		"no matching cluster": {withSelector(&metav1.LabelSelector{MatchLabels: east}),
			[]client.Object{usableCluster("a", nil)}, "", ReasonUnschedulable, `NoMatchingCluster: no KubernetesCluster in namespace apps matches clusterSelector "region=east"`},
		"no ready cluster": {withSelector(nil),
			[]client.Object{unbound}, "", ReasonUnschedulable, "NoReadyCluster: KubernetesClusters c-unbound match"},
		"a member of an autoscaled pool at applicationsPerCluster is passed over": {withSelector(&metav1.LabelSelector{MatchLabels: gpu}),
			[]client.Object{pool, member("gpu-a"), usableCluster("static", gpu), placedApp("x1", "gpu-a"), placedApp("x2", "gpu-a"), placedApp("x3", "static"), placedApp("x4", "static"), placedApp("x5", "static")},
			"KubernetesCluster/apps/static", ReasonScheduled, "fewest applications (3) among 1"},
		"every matching member full: ClustersFull, and the pool growing for it": {withSelector(&metav1.LabelSelector{MatchLabels: gpu}),
			[]client.Object{pool, member("gpu-a"), placedApp("x1", "gpu-a"), placedApp("x2", "gpu-a")},
			"", ReasonUnschedulable, `ClustersFull: every KubernetesCluster matching clusterSelector "pool=gpu" holds its pool's applicationsPerCluster applications: gpu-a (2 of 2, ResourcePool gpu); ResourcePool gpu is growing for it (1 of at most 3 clusters)`},
		"no matching cluster: the pool growing for it is named": {withSelector(&metav1.LabelSelector{MatchLabels: gpu}),
			[]client.Object{pool}, "", ReasonUnschedulable, `NoMatchingCluster: no KubernetesCluster in namespace apps matches clusterSelector "pool=gpu"; create one or relabel a cluster; ResourcePool gpu is growing for it (1 of at most 3 clusters)`},
		"invalid selector": {withSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}),
			nil, "", ReasonUnschedulable, "InvalidClusterSelector: spec.clusterSelector"},
		"a ready ProviderConfig": {withPC("edge", ""), []client.Object{pcReady},
			"ProviderConfig/apps/edge", ReasonScheduled, "placed on providerconfigs.kubernetes.terraplane.io apps/edge named by spec.providerConfigRef"},
		"a ProviderConfig not checked yet": {withPC("fresh", ""), []client.Object{pcNew},
			"", ReasonUnschedulable, "ClusterUnusable: providerconfigs.kubernetes.terraplane.io apps/fresh has not reached its cluster yet"},
		"a missing ProviderConfig": {withPC("absent", ""), nil,
			"", ReasonUnschedulable, "ProviderConfigNotFound: providerconfigs.kubernetes.terraplane.io apps/absent named by spec.providerConfigRef does not exist"},
		"a ProviderConfig that does not consent": {withPC("closed", "clusters"), []client.Object{pcClosed},
			"", common.ReasonReferenceNotAllowed, "does not allow references from namespace apps"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := fake.NewClientBuilder().WithScheme(schedulerScheme(t)).WithObjects(append(tc.objs, tc.app)...).
				WithStatusSubresource(&workloadv1.KubernetesApplication{}).Build()
			rec := events.NewFakeRecorder(10)
			r := &Reconciler{client: c, reader: c, opts: Options{Retry: time.Minute}, recorder: resource.RecorderFor(rec)}
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tc.app)}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			got := &workloadv1.KubernetesApplication{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.app), got); err != nil {
				t.Fatal(err)
			}
			cluster := ""
			if got.Status.ClusterRef != nil {
				cluster = got.Status.ClusterRef.String()
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, workloadv1.TypeScheduled)
			if cluster != tc.wantCluster || cond == nil || cond.Reason != tc.wantReason || !strings.Contains(cond.Message, tc.wantMessage) {
				t.Fatalf("cluster %q, Scheduled %+v; want %q, %s containing %q", cluster, cond, tc.wantCluster, tc.wantReason, tc.wantMessage)
			}
			wantState := workloadv1.ApplicationStatePending
			if tc.wantCluster != "" {
				wantState = workloadv1.ApplicationStateScheduled
			}
			if got.Status.State != wantState || len(rec.Events) != 1 {
				t.Errorf("state %s with %d events, want %s with one", got.Status.State, len(rec.Events), wantState)
			}
		})
	}
}

// TestPlacementReservesThePoolMember: placing an application on a member of an
// autoscaled pool stamps the member first, so that a scale-down decided on the member
// as it was read (idle) fails its precondition instead of removing the cluster the
// application is going to.
func TestPlacementReservesThePoolMember(t *testing.T) {
	ctx := context.Background()
	gpu := map[string]string{"pool": "gpu"}
	member := usableCluster("gpu-a", map[string]string{"pool": "gpu", common.PoolLabel: "gpu"})
	pool := &scalingv1.ResourcePool{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "gpu"}, Spec: scalingv1.ResourcePoolSpec{
		ClaimTemplate: scalingv1.ClaimTemplate{APIVersion: "compute.terraplane.io/v1alpha1", Kind: "KubernetesCluster", Labels: gpu},
		Autoscale:     &scalingv1.Autoscale{ApplicationsPerCluster: 2, Max: 3}}}
	app := placedApp("new", "")
	app.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: gpu}
	c := fake.NewClientBuilder().WithScheme(schedulerScheme(t)).WithObjects(pool, member, app).
		WithStatusSubresource(&workloadv1.KubernetesApplication{}).Build()
	idle := &computev1.KubernetesCluster{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(member), idle); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{client: c, reader: c, opts: Options{Retry: time.Minute}, recorder: resource.RecorderFor(events.NewFakeRecorder(10))}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(app)}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	got := &computev1.KubernetesCluster{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(member), got); err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.RFC3339, got.Annotations[common.PlacedAtAnnotation]); err != nil {
		t.Fatalf("member annotations %v: want %s stamped: %v", got.Annotations, common.PlacedAtAnnotation, err)
	}
	err := c.Delete(ctx, idle, client.Preconditions{UID: &idle.UID, ResourceVersion: &idle.ResourceVersion})
	if !apierrors.IsConflict(err) {
		t.Errorf("a scale-down of the member as read before the placement: %v, want a conflict", err)
	}
}

// TestReconcileMoves: an application whose cluster turned unusable is placed again only
// when nothing was submitted to it; a usable cluster keeps it.
func TestReconcileMoves(t *testing.T) {
	gone := usableCluster("old", nil)
	gone.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionFalse, Reason: "ClusterUnreachable", Message: "no answer", LastTransitionTime: metav1.Now()}}
	submitted := func(app *workloadv1.KubernetesApplication) *workloadv1.KubernetesApplicationResource {
		res := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "workload.terraplane.io/v1alpha1", Kind: "KubernetesApplication", Name: app.Name, UID: app.UID, Controller: ptr(true)}}}}
		res.Status.ClusterRef = app.Status.ClusterRef.DeepCopy()
		return res
	}
	app := placedApp("app", "old")
	cases := map[string]struct {
		objs        []client.Object
		wantCluster string
		wantEvent   string
	}{
		"unusable, nothing submitted":        {[]client.Object{gone, usableCluster("new", nil)}, "KubernetesCluster/apps/new", ReasonRescheduling},
		"unusable, something submitted":      {[]client.Object{gone, usableCluster("new", nil), submitted(app)}, "KubernetesCluster/apps/old", ""},
		"deleted cluster, nothing submitted": {[]client.Object{usableCluster("new", nil)}, "KubernetesCluster/apps/new", ReasonRescheduling},
		"still usable":                       {[]client.Object{usableCluster("old", nil), usableCluster("new", nil)}, "KubernetesCluster/apps/old", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := fake.NewClientBuilder().WithScheme(schedulerScheme(t)).WithObjects(append(tc.objs, app.DeepCopy())...).
				WithStatusSubresource(&workloadv1.KubernetesApplication{}).Build()
			rec := events.NewFakeRecorder(10)
			r := &Reconciler{client: c, reader: c, opts: Options{Retry: time.Minute}, recorder: resource.RecorderFor(rec)}
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(app)}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			got := &workloadv1.KubernetesApplication{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.ClusterRef == nil || got.Status.ClusterRef.String() != tc.wantCluster {
				t.Errorf("cluster %v, want %s", got.Status.ClusterRef, tc.wantCluster)
			}
			moved := false
			for len(rec.Events) > 0 {
				if strings.Contains(<-rec.Events, ReasonRescheduling) {
					moved = true
				}
			}
			if moved != (tc.wantEvent != "") {
				t.Errorf("a %s event: %v, want %v", ReasonRescheduling, moved, tc.wantEvent != "")
			}
		})
	}
}

// TestAffected: a changed cluster wakes every waiting application and those placed on
// it, and no other.
func TestAffected(t *testing.T) {
	onPC := placedApp("on-pc", "")
	onPC.Status.ClusterRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: "a"}
	c := fake.NewClientBuilder().WithScheme(schedulerScheme(t)).WithObjects(
		placedApp("waiting", ""), placedApp("on-a", "a"), placedApp("on-b", "b"), onPC).Build()
	r := &Reconciler{client: c}
	cluster := &computev1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "a"}}
	var got []string
	for _, req := range r.affected(workloadv1.ClusterKindClaim)(context.Background(), cluster) {
		got = append(got, req.Name)
	}
	if diff := cmp.Diff([]string{"on-a", "waiting"}, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	pc := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "a"}}
	got = nil
	for _, req := range r.affected(workloadv1.ClusterKindProviderConfig)(context.Background(), pc) {
		got = append(got, req.Name)
	}
	if diff := cmp.Diff([]string{"on-pc", "waiting"}, got); diff != "" {
		t.Errorf("requests for a ProviderConfig (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }
