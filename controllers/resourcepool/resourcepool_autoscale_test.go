package resourcepool

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resourcepool"
)

// clusterPool is an autoscaled pool "warm" of KubernetesClusters labelled pool=gpu.
func clusterPool() *scalingv1.ResourcePool {
	return &scalingv1.ResourcePool{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "warm", UID: "pool-uid", Generation: 1},
		Spec: scalingv1.ResourcePoolSpec{ClaimTemplate: scalingv1.ClaimTemplate{
			APIVersion: computev1.GroupVersion.String(), Kind: "KubernetesCluster", Labels: map[string]string{"pool": "gpu"}},
			Autoscale: &scalingv1.Autoscale{ApplicationsPerCluster: 2, Max: 2, ScaleDownAfter: &metav1.Duration{Duration: time.Second}}}}
}

// waitingApp is an application the scheduler reported unschedulable, selecting pool=gpu.
func waitingApp(name string) *workloadv1.KubernetesApplication {
	a := &workloadv1.KubernetesApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}}
	a.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "gpu"}}
	a.Status.Conditions = []metav1.Condition{{Type: workloadv1.TypeScheduled, Status: metav1.ConditionFalse, Reason: "Unschedulable",
		Message: "NoMatchingCluster: ...", LastTransitionTime: metav1.Now()}}
	return a
}

func clusterMembers(t *testing.T, c client.Client) []computev1.KubernetesCluster {
	t.Helper()
	list := &computev1.KubernetesClusterList{}
	if err := c.List(context.Background(), list, client.InNamespace("team"), client.MatchingLabels{common.PoolLabel: "warm"}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func drain(events chan string) []string {
	var out []string
	for len(events) > 0 {
		out = append(out, <-events)
	}
	return out
}

// TestAutoscaleGrows: an application waiting for a cluster the template would match
// makes one member, labelled as the template says; the pool and the application each
// get an event, the status counts it waiting, and a second reconcile makes no more.
func TestAutoscaleGrows(t *testing.T) {
	r, c, rec := poolReconciler(t, clusterPool(), waitingApp("web"))
	pool := reconcilePool(t, r, c)
	ms := clusterMembers(t, c)
	if len(ms) != 1 || ms[0].Labels["pool"] != "gpu" {
		t.Fatalf("members %+v, want one labelled pool=gpu", ms)
	}
	if pool.Status.Pending != 1 || len(pool.Status.Clusters) != 1 || pool.Status.Clusters[0].Name != ms[0].Name {
		t.Errorf("status %+v", pool.Status)
	}
	if ready := meta.FindStatusCondition(pool.Status.Conditions, common.TypeReady); ready == nil || ready.Reason != resourcepool.ReasonApplicationsWaiting {
		t.Errorf("Ready %+v", ready)
	}
	events := drain(rec.Events)
	var pooled, app bool
	for _, e := range events {
		pooled = pooled || strings.Contains(e, ReasonScaledUp) && strings.Contains(e, "made KubernetesCluster "+ms[0].Name+" (ApplicationsWaiting) for application(s) web")
		app = app || strings.Contains(e, ReasonClusterAdded) && strings.Contains(e, "ResourcePool warm is adding KubernetesCluster "+ms[0].Name)
	}
	if !pooled || !app {
		t.Errorf("events %q: want ScaledUp on the pool and ClusterAdded on the application", events)
	}
	if reconcilePool(t, r, c); len(clusterMembers(t, c)) != 1 {
		t.Errorf("a second reconcile made more members: %d", len(clusterMembers(t, c)))
	}
}

// TestAutoscaleShrinks: a Ready member idle for scaleDownAfter is deleted; one holding an
// application stays.
func TestAutoscaleShrinks(t *testing.T) {
	pool := clusterPool()
	long := metav1.NewTime(time.Now().Add(-time.Minute))
	pool.Status.Clusters = []scalingv1.ClusterMember{{Name: "warm-idle", Ready: true, IdleSince: &long}, {Name: "warm-busy", Ready: true}}
	member := func(name string) *computev1.KubernetesCluster {
		m := &computev1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Labels: map[string]string{common.PoolLabel: "warm", "pool": "gpu"}}}
		m.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: "Available", LastTransitionTime: metav1.Now()}}
		return m
	}
	placed := waitingApp("web")
	placed.Status.Conditions = nil
	placed.Status.ClusterRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: "warm-busy", Namespace: "team"}
	r, c, rec := poolReconciler(t, pool, member("warm-idle"), member("warm-busy"), placed)
	got := reconcilePool(t, r, c)
	ms := clusterMembers(t, c)
	if len(ms) != 1 || ms[0].Name != "warm-busy" {
		t.Fatalf("members %+v, want warm-busy alone", ms)
	}
	if len(got.Status.Clusters) != 1 || got.Status.Clusters[0].Applications != 1 {
		t.Errorf("status clusters %+v", got.Status.Clusters)
	}
	events := drain(rec.Events)
	if len(events) != 1 || !strings.Contains(events[0], "removed KubernetesCluster warm-idle (Idle): it held no application for 1s") {
		t.Errorf("events %q", events)
	}
}
