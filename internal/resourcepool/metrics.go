package resourcepool

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// How a claim that names a pool was filled: metrics label values.
const (
	// FilledWarm: the claim took a ready member.
	FilledWarm = "warm"
	// FilledCold: no member was ready; the claim was provisioned from the pool's class.
	FilledCold = "cold"
)

var (
	membersGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "terraplane_resourcepool_members",
		Help: "Members of each ResourcePool by state (ready, provisioning, failed, handedOut), as its last reconcile counted them.",
	}, []string{"namespace", "pool", "state"})
	claimsFilled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "terraplane_resourcepool_claims_filled_total",
		Help: "Claims naming a ResourcePool that were filled warm (a ready member taken) or cold (provisioned, no member ready).",
	}, []string{"namespace", "pool", "fill"})
	scaled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "terraplane_resourcepool_scaled_total",
		Help: "Members a ResourcePool made (direction up) or removed (down), by reason.",
	}, []string{"namespace", "pool", "direction", "reason"})
)

// RegisterMetrics adds the pool metrics to controller-runtime's registry; a second call
// (tests run several managers) is no error.
func RegisterMetrics() error {
	for _, c := range []prometheus.Collector{membersGauge, claimsFilled, scaled} {
		if err := metrics.Registry.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// ObserveMembers records a pool's counts.
func ObserveMembers(namespace, pool string, c Counts) {
	for state, n := range map[State]int32{Ready: c.Ready, Provisioning: c.Provisioning, Failed: c.Failed, HandedOut: c.HandedOut} {
		membersGauge.WithLabelValues(namespace, pool, string(state)).Set(float64(n))
	}
}

// ForgetPool drops the gauges of a pool that is gone.
func ForgetPool(namespace, pool string) {
	membersGauge.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "pool": pool})
}

// ObserveFill counts a claim filled from a pool, warm or cold.
func ObserveFill(namespace, pool, fill string) {
	claimsFilled.WithLabelValues(namespace, pool, fill).Inc()
}

// ObserveScale counts members made (up) or removed (down) for reason.
func ObserveScale(namespace, pool, direction, reason string, n int32) {
	if n > 0 {
		scaled.WithLabelValues(namespace, pool, direction, reason).Add(float64(n))
	}
}
