package app

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"terraplane.io/terraplane/internal/engine"
)

// registerEngineMetrics exposes how many terraform processes the engine started, so that
// `make bench` (and operators) can see that steady state runs none.
func registerEngineMetrics(eng *engine.Engine) error {
	c := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "terraplane_terraform_processes_total",
		Help: "terraform processes started by the engine",
	}, func() float64 { return float64(eng.Processes()) })
	err := metrics.Registry.Register(c)
	var exists prometheus.AlreadyRegisteredError
	if errors.As(err, &exists) {
		return nil // several managers in one process (tests): the first one reports
	}
	return err
}
