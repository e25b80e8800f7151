package terraform

import (
	"context"
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// driftDetectedTotal counts drift found by periodic plans.
var driftDetectedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "terraplane_drift_detected_total",
	Help: "Drift found by periodic plans, per managed kind and its API group (each plan of drift counted once).",
}, []string{"kind", "group"})

// stateGauges describes the managed resources per kind and condition at scrape time.
var stateGauges = map[string]*prometheus.Desc{
	"ready":  prometheus.NewDesc("terraplane_managed_ready", "Managed resources whose Ready condition is True, per kind and API group.", []string{"kind", "group"}, nil),
	"synced": prometheus.NewDesc("terraplane_managed_synced", "Managed resources whose Synced condition is True, per kind and API group.", []string{"kind", "group"}, nil),
	"awaiting": prometheus.NewDesc("terraplane_managed_awaiting_approval",
		"Managed resources with a plan awaiting approval or refused as destructive, per kind and API group.", []string{"kind", "group"}, nil),
	"drifted": prometheus.NewDesc("terraplane_managed_drifted", "Managed resources whose Drifted condition is True, per kind and API group.", []string{"kind", "group"}, nil),
}

// stateCollector counts managed resources by condition from the manager's cache.
type stateCollector struct {
	reader client.Reader
	kinds  []*registry.ManagedKind
}

// Describe sends the gauges' descriptions.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range stateGauges {
		ch <- d
	}
}

// Collect lists every kind and counts its resources by condition.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	for _, k := range c.kinds {
		list := k.NewList()
		if err := c.reader.List(context.Background(), list); err != nil {
			continue
		}
		counts := map[string]float64{}
		_ = forEach(list, func(mg resource.Managed) {
			conds := mg.GetManagedStatus().Conditions
			if meta.IsStatusConditionTrue(conds, common.TypeReady) {
				counts["ready"]++
			}
			synced := meta.FindStatusCondition(conds, common.TypeSynced)
			if synced != nil && synced.Status == "True" {
				counts["synced"]++
			}
			if synced != nil && synced.Status == "False" && (synced.Reason == common.ReasonAwaitingApproval || synced.Reason == common.ReasonDestructiveChangeRefused) {
				counts["awaiting"]++
			}
			if meta.IsStatusConditionTrue(conds, common.TypeDrifted) {
				counts["drifted"]++
			}
		})
		for name, d := range stateGauges {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, counts[name], k.GVK.Kind, k.GVK.Group)
		}
	}
}

var registerOnce sync.Once

// registerMetrics adds the managed reconcilers' metrics to controller-runtime's registry
// once per process (tests run several managers; the first one reports).
func registerMetrics(reader client.Reader, kinds []*registry.ManagedKind) error {
	var err error
	registerOnce.Do(func() {
		for _, c := range []prometheus.Collector{driftDetectedTotal, &stateCollector{reader: reader, kinds: kinds}} {
			if rerr := metrics.Registry.Register(c); rerr != nil && !errors.As(rerr, new(prometheus.AlreadyRegisteredError)) {
				err = rerr
			}
		}
	})
	return err
}
