package collectors

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/cacheread"
	"terraplane.io/terraplane/internal/kinds"
)

// gather collects c into series "name{label=value,...}" → value; only the series of the
// kinds Module, Object and Bucket, the ones these tests make.
func gather(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.Metric {
			labels := []string{}
			for _, l := range m.Label {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			series := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			if strings.Contains(series, "kind=Module") || strings.Contains(series, "kind=Object") || strings.Contains(series, "kind=Bucket}") ||
				strings.Contains(series, "provider=") || len(labels) == 0 {
				got[series] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
	}
	return got
}

func conds(c ...metav1.Condition) []metav1.Condition { return c }

func cond(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason}
}

// scrapedAt is the gauge tests' clock.
var scrapedAt = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// gaugeObjects are three Modules (u-1 ready and synced, last planned 25 minutes before
// scrapedAt; u-2 ready, awaiting approval, stalled and drifted, planned as long ago;
// u-3 being created), an Object and a ready Bucket claim.
func gaugeObjects() []client.Object {
	ready := cond(common.TypeReady, metav1.ConditionTrue, common.ReasonAvailable)
	longAgo := metav1.NewTime(scrapedAt.Add(-25 * time.Minute))
	m1 := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "u-1"}}
	m1.Status.Conditions = conds(ready, cond(common.TypeSynced, metav1.ConditionTrue, common.ReasonReconcileSuccess))
	m1.Status.Terraform.LastPlanTime = &longAgo
	m2 := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns", UID: "u-2"}}
	m2.Status.Terraform.LastPlanTime = &longAgo
	m2.Status.Conditions = conds(ready, cond(common.TypeSynced, metav1.ConditionFalse, common.ReasonAwaitingApproval),
		cond(common.TypeStalled, metav1.ConditionTrue, common.ReasonAwaitingApproval), cond(common.TypeDrifted, metav1.ConditionTrue, common.ReasonDriftDetected))
	m3 := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "u-3"}}
	m3.Status.Conditions = conds(cond(common.TypeReconciling, metav1.ConditionTrue, common.ReasonApplying))
	o := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "ns", UID: "u-4"}}
	o.Status.Conditions = conds(ready)
	b := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "app", UID: "u-5"}}
	b.Status.Conditions = conds(ready)
	return []client.Object{m1, m2, m3, o, b}
}

// TestObjectGauges: each kind's objects are counted by condition, by one replica only:
// the leader counts claims and the kinds that are not sharded, each replica the
// resources of the shards it holds; so the sum over replicas is the cluster's count.
func TestObjectGauges(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(gaugeObjects()...).Build()
	leading, waiting := make(chan struct{}), make(chan struct{})
	close(leading)
	src := func(elected chan struct{}, holds func(types.UID) bool) prometheus.Collector {
		return &objectCollector{src: &objectSource{cached: cacheread.Source{Reader: c}, reg: kinds.NewRegistry(nil), scheme: kinds.NewScheme(), elected: elected, holds: holds,
			driftInterval: 10 * time.Minute, now: func() time.Time { return scrapedAt }}}
	}
	const mod, obj, bucket = "{group=terraform.terraplane.io,kind=Module}", "{group=kubernetes.terraplane.io,kind=Object}", "{group=storage.terraplane.io,kind=Bucket}"
	modules := func(exists, ready, synced, awaiting, drifted, stalled, overdue float64) map[string]float64 {
		return map[string]float64{"terraplane_managed_exists" + mod: exists, "terraplane_managed_ready" + mod: ready,
			"terraplane_managed_synced" + mod: synced, "terraplane_managed_awaiting_approval" + mod: awaiting,
			"terraplane_managed_drifted" + mod: drifted, "terraplane_managed_stalled" + mod: stalled,
			"terraplane_managed_drift_check_overdue" + mod: overdue}
	}
	leaderOnly := map[string]float64{"terraplane_managed_exists" + obj: 1, "terraplane_managed_ready" + obj: 1, "terraplane_managed_synced" + obj: 0,
		"terraplane_managed_awaiting_approval" + obj: 0, "terraplane_managed_drifted" + obj: 0, "terraplane_managed_stalled" + obj: 0,
		"terraplane_managed_drift_check_overdue" + obj: 0, "terraplane_claim_exists" + bucket: 1, "terraplane_claim_ready" + bucket: 1,
		"terraplane_claim_stalled" + bucket: 0}
	with := func(a, b map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for k, v := range a {
			out[k] = v
		}
		for k, v := range b {
			out[k] = v
		}
		return out
	}
	for name, tc := range map[string]struct {
		c    prometheus.Collector
		want map[string]float64
	}{
		"the leader, not sharded":                 {src(leading, nil), with(modules(3, 2, 1, 1, 1, 1, 1), leaderOnly)},
		"a replica not leading, not sharded":      {src(waiting, nil), map[string]float64{}},
		"the leader holding the shard of u-1":     {src(leading, func(u types.UID) bool { return u == "u-1" }), with(modules(1, 1, 1, 0, 0, 0, 1), leaderOnly)},
		"another replica holding u-2's and u-3's": {src(waiting, func(u types.UID) bool { return u != "u-1" }), modules(2, 1, 0, 1, 1, 1, 0)},
		"no manager yet":                          {&objectCollector{}, map[string]float64{}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, gather(t, tc.c)); diff != "" {
				t.Errorf("series (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAwaitingApproval: a plan held for approval, a provider upgrade waiting for one and a
// refused destructive plan count as awaiting; a failure or a synced resource does not.
func TestAwaitingApproval(t *testing.T) {
	for _, tc := range []struct {
		conds []metav1.Condition
		want  bool
	}{
		{conds(cond(common.TypeSynced, metav1.ConditionFalse, common.ReasonAwaitingApproval)), true},
		{conds(cond(common.TypeSynced, metav1.ConditionFalse, common.ReasonProviderUpgrade)), true},
		{conds(cond(common.TypeSynced, metav1.ConditionFalse, common.ReasonDestructiveChangeRefused)), true},
		{conds(cond(common.TypeSynced, metav1.ConditionFalse, common.ReasonReconcileError)), false},
		{conds(cond(common.TypeSynced, metav1.ConditionTrue, common.ReasonReconcileSuccess)), false},
		{conds(cond(common.TypeReady, metav1.ConditionFalse, common.ReasonProviderUpgrade)), false},
	} {
		if got := awaitingApproval(tc.conds); got != tc.want {
			t.Errorf("awaitingApproval(%v) = %v, want %v", tc.conds, got, tc.want)
		}
	}
}

// TestDriftCheckOverdue: a settled resource counts once it has gone unplanned for more
// than twice its drift interval, its own or else the controller's; a resource that is
// not settled, never planned, or not a managed resource does not.
func TestDriftCheckOverdue(t *testing.T) {
	settled := conds(cond(common.TypeReady, metav1.ConditionTrue, common.ReasonAvailable),
		cond(common.TypeSynced, metav1.ConditionTrue, common.ReasonReconcileSuccess))
	module := func(plannedAgo time.Duration, own time.Duration) *terraformv1.Module {
		m := &terraformv1.Module{}
		if plannedAgo >= 0 {
			at := metav1.NewTime(scrapedAt.Add(-plannedAgo))
			m.Status.Terraform.LastPlanTime = &at
		}
		if own > 0 {
			m.Spec.Timing.DriftInterval = &metav1.Duration{Duration: own}
		}
		return m
	}
	for name, tc := range map[string]struct {
		obj        client.Object
		conds      []metav1.Condition
		controller time.Duration
		want       bool
	}{
		"planned within the interval":            {module(9*time.Minute, 0), settled, 10 * time.Minute, false},
		"late by the jitter and a queue":         {module(19*time.Minute, 0), settled, 10 * time.Minute, false},
		"unplanned for over twice the interval":  {module(21*time.Minute, 0), settled, 10 * time.Minute, true},
		"its own longer interval":                {module(21*time.Minute, time.Hour), settled, 10 * time.Minute, false},
		"its own shorter interval":               {module(3*time.Minute, time.Minute), settled, 10 * time.Minute, true},
		"never planned":                          {module(-1, 0), settled, 10 * time.Minute, false},
		"not Synced: retried, not drift-checked": {module(time.Hour, 0), conds(settled[0]), 10 * time.Minute, false},
		"not Ready: being made":                  {module(time.Hour, 0), conds(settled[1]), 10 * time.Minute, false},
		"no drift interval anywhere":             {module(time.Hour, 0), settled, 0, false},
		"a claim, which Terraform does not plan": {&storagev1.Bucket{}, settled, 10 * time.Minute, false},
	} {
		t.Run(name, func(t *testing.T) {
			got := driftCheckOverdue(view{obj: tc.obj, conds: tc.conds, now: scrapedAt, driftInterval: tc.controller})
			if got != tc.want {
				t.Errorf("driftCheckOverdue = %v, want %v", got, tc.want)
			}
		})
	}
}
