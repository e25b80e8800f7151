package terraform

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"terraplane.io/terraplane/internal/planpolicy"
)

// driftDetectedTotal counts drift found by periodic plans. The counts of managed
// resources by condition are internal/app's (gauges.go).
var driftDetectedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "terraplane_drift_detected_total",
	Help: "Drift found by periodic plans, per managed kind and its API group (each plan of drift counted once).",
}, []string{"kind", "group"})

var registerOnce sync.Once

// registerMetrics adds the managed reconcilers' metrics to controller-runtime's registry
// once per process (tests run several managers).
func registerMetrics() error {
	var err error
	registerOnce.Do(func() {
		if rerr := metrics.Registry.Register(driftDetectedTotal); rerr != nil && !errors.As(rerr, new(prometheus.AlreadyRegisteredError)) {
			err = rerr
		}
		if rerr := planpolicy.RegisterMetrics(); rerr != nil && err == nil {
			err = rerr
		}
	})
	return err
}
